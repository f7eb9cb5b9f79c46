import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../core/module-worker.js';
import type { WorkerPoolStats } from '../limits/worker-pool.js';
import type { TileFormat } from '../tiles/types.js';

/** Test hooks only; never set from config. */
export interface RenderPoolHooks {
  /** Each render first keeps its thread busy this long (synchronously, as drawing does). */
  testDelayMs?: number;
}

/** What a render thread is started with. */
export interface RenderThreadData {
  dataDir: string;
  /** Ids of abandoned renders, each at `id % CANCEL_WORDS`: a thread skips a render it finds there. */
  cancelled: Int32Array;
  testDelayMs?: number;
  /** Niceness of the thread (see core/thread-priority.ts). */
  nice: number;
}

/**
 * Render and static-map threads yield the CPU to the HTTP thread more than routing and places threads do (8):
 * a burst of maps and cold tiles is batch work beside the requests the event loop answers, and the event loop is
 * mostly idle, so drawing still gets nearly all of a free core (bench:overload: /livez p99 during bursts fell by
 * about a third at 10, with the same goodput).
 */
export const RENDER_NICE = 10;

/** Renders a thread may hold at once are a few; 4096 words keep an abandoned id until thousands of later ones. */
export const CANCEL_WORDS = 4096;

/** The requester stopped waiting for a render (its signal fired): it was dropped, or its result is not awaited. */
class RenderAbandoned extends Error {
  override name = 'RenderAbandoned';
  constructor(readonly reason: 'deadline' | 'aborted') {
    super(`render abandoned: ${reason}`);
  }
}

interface Pending {
  resolve(b: Buffer): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** Renders sent to the thread and not answered yet (abandoned ones too: the thread still holds them). */
  busy: Map<number, Pending>;
}

export interface RenderPoolStats extends WorkerPoolStats {
  /** Abandoned renders the thread had not begun: dropped, never drawn. */
  skipped: number;
}

/**
 * Render threads for the built-in renderer. Jobs go to the thread with the fewest in flight; a thread that dies
 * fails its jobs (the serving path then answers a stand-in or 502) and is replaced. Under tsx (development and
 * tests) the TypeScript worker is bootstrapped through tsx's loader; the built package runs the compiled .js.
 *
 * A render carries its requester's AbortSignal, as routing and places tasks do (limits/worker-pool.ts). Once it fires,
 * the caller is answered at once (nobody awaits the render any more) and the render's id is written to a shared
 * cancel array: a thread that reaches a render it has not begun skips it. One a thread has begun is drawn to the end
 * (canvas drawing cannot be interrupted) and its bytes are discarded.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;
  private readonly cancelled = new Int32Array(new SharedArrayBuffer(4 * CANCEL_WORDS));
  private readonly counts = { expired: 0, aborted: 0, replaced: 0, completed: 0, skipped: 0 };

  /** Threads start on the first render, so an app that never renders a tile never pays for them. */
  constructor(
    readonly size: number,
    private readonly dataDir: string,
    private readonly hooks: RenderPoolHooks = {},
  ) {}

  /** Occupancy for /metrics and tests: `active` renders sent to threads, `queued` those behind another on a thread. */
  get stats(): RenderPoolStats {
    let active = 0;
    let queued = 0;
    for (const s of this.slots) {
      active += s.busy.size;
      queued += Math.max(0, s.busy.size - 1);
    }
    return { size: this.size, active, queued, shed: 0, ...this.counts };
  }

  private spawn(): Slot {
    const here = import.meta.url;
    const workerData: RenderThreadData = {
      dataDir: this.dataDir,
      cancelled: this.cancelled,
      testDelayMs: this.hooks.testDelayMs,
      nice: RENDER_NICE,
    };
    const worker = startModuleWorker(here, 'render-worker', workerData);
    worker.unref(); // an idle render thread never keeps the process alive
    const slot: Slot = { worker, busy: new Map() };
    worker.on('message', (m: { id?: number; bytes?: ArrayBuffer; error?: string; skipped?: boolean }) => {
      if (m.id === undefined) return;
      const p = slot.busy.get(m.id);
      slot.busy.delete(m.id);
      if (m.skipped) this.counts.skipped++;
      else this.counts.completed++;
      if (!p) return;
      if (m.bytes) p.resolve(Buffer.from(m.bytes));
      else p.reject(new Error(m.error ?? (m.skipped ? 'render skipped' : 'render thread failed')));
    });
    const fail = (e: Error) => {
      for (const p of slot.busy.values()) p.reject(e);
      slot.busy.clear();
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closed) {
        this.counts.replaced++;
        this.slots[i] = this.spawn();
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => code !== 0 && fail(new Error(`render thread exited with code ${code}`)));
    return slot;
  }

  render(z: number, x: number, y: number, scale: number, format: TileFormat, signal?: AbortSignal): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('render pool closed'));
    if (signal?.aborted) return Promise.reject(new RenderAbandoned(abandonReason(signal)));
    while (this.slots.length < this.size) this.slots.push(this.spawn());
    const slot = this.slots.reduce((a, b) => (b.busy.size < a.busy.size ? b : a));
    const id = this.nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      const settle = (): boolean => {
        if (settled) return false;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (!settle()) return;
        const reason = abandonReason(signal!);
        this.counts[reason === 'deadline' ? 'expired' : 'aborted']++;
        Atomics.store(this.cancelled, id % CANCEL_WORDS, id); // skipped if the thread has not begun it
        reject(new RenderAbandoned(reason));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      slot.busy.set(id, {
        resolve: (b) => settle() && resolve(b),
        reject: (e) => settle() && reject(e),
      });
      slot.worker.postMessage({ id, z, x, y, scale, format });
    });
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots) void s.worker.terminate();
  }
}

/** A signal made by AbortSignal.timeout (a deadline) fires with a TimeoutError; a requester that left, AbortError. */
const abandonReason = (signal: AbortSignal): 'deadline' | 'aborted' =>
  (signal.reason as Error | undefined)?.name === 'TimeoutError' ? 'deadline' : 'aborted';
