import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../core/thread-priority.js';

/** What a pool thread is started with (see worker-pool.ts). */
export interface HostData {
  slot: number;
  /** One word per thread: the id of the task the pool abandoned. */
  cancel: Int32Array;
  init: unknown;
  /** Niceness for this thread (0 = as the process). */
  nice: number;
}

export type HostRequest = { t: 'run'; id: number; p: unknown } | { t: 'update'; id: number; p: unknown };
export type HostReply = { id: number; ok: true; v?: unknown } | { id: number; ok: false; e?: string; n?: string };

/** The id of the message a thread sends once, when its engine is set up. */
export const READY = 0;

/** Thrown by a task's `check()` once the pool abandoned the task (deadline passed or requester gone). */
class TaskCancelled extends Error {
  override name = 'TaskCancelled';
  constructor() {
    super('task cancelled');
  }
}

/**
 * The thread side of a WorkerPool: builds the engine from the shared state, then answers tasks one at a time.
 * A handler gets `check`, which throws TaskCancelled once the pool has abandoned the task; engines call it every
 * few hundred steps of their inner loops (an Atomics.load of one word, so it costs next to nothing).
 */
export function serveTasks<S>(
  setup: (init: unknown, previous?: S) => S,
  handle: (state: S, payload: unknown, check: () => void) => unknown,
): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks runs in a worker thread');
  const data = workerData as HostData;
  let state: S | undefined;
  let setupError: Error | undefined;
  try {
    state = setup(data.init);
  } catch (e) {
    setupError = e as Error;
  }
  // Lowered once set up, not before: the set-up (a places index's columns, seconds on a country) is what a server
  // that is starting waits for, and at a low priority another process keeping the cores busy would starve it
  // (nice 8 gets ~1/6 of a core beside one busy process). Queries then run at the pool's lower priority.
  lowerThreadPriority(data.nice);
  // Set up (ok) or not: a pool keeps callers on their in-process fallback while no thread is ready.
  port.postMessage(setupError ? { id: READY, ok: false, e: setupError.message } : { id: READY, ok: true });
  port.on('message', (m: HostRequest) => {
    if (m.t === 'update') {
      try {
        state = setup(m.p, state);
        setupError = undefined;
      } catch (e) {
        setupError = e as Error;
      }
      return port.postMessage({ id: m.id, ok: true } satisfies HostReply);
    }
    const id = m.id;
    const check = () => {
      if (Atomics.load(data.cancel, data.slot) === id) throw new TaskCancelled();
    };
    // Answers are copied, never moved (no transfer list): moving an ArrayBuffer detaches it, and once one has been
    // detached in a thread V8 compiles every typed-array access of that thread with a detached check. Routing
    // threads at 600 copies then answered long routes x1.12 slower for the rest of their life; copying a long
    // route's 120 KB answer costs ~0.03 ms.
    const reply = (v: unknown) => port.postMessage({ id, ok: true, v } satisfies HostReply);
    const fail = (e: unknown) => {
      const err = e as Error;
      port.postMessage({ id, ok: false, e: err?.message ?? String(e), n: err?.name } satisfies HostReply);
    };
    try {
      if (setupError || state === undefined) throw setupError ?? new Error('engine not initialised');
      const v = handle(state, m.p, check);
      // A handler may finish asynchronously (an image decode); the pool still sends one task at a time.
      if (v instanceof Promise) v.then(reply, fail);
      else reply(v);
    } catch (e) {
      fail(e);
    }
  });
}
