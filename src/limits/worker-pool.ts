import type { Worker } from 'node:worker_threads';
import { processWarnings } from '../core/log.js';
import { startModuleWorker } from '../core/module-worker.js';
import { AppError, type ErrorCode } from '../core/errors.js';
import { READY, type HostData, type HostReply, type HostRequest } from './worker-host.js';

/**
 * A pool of engine threads (routing, places): queries leave the event loop, so a slow one never stalls the HTTP
 * thread. `size` threads each run one task at a time; up to `queue` tasks wait, one more is shed at once with the
 * capability's *_BACKPRESSURE code. Every task carries a deadline and may carry the requester's AbortSignal:
 *
 * - a queued task whose deadline passes or whose signal fires is dropped and never reaches a thread;
 * - a running one is abandoned: its caller is answered at once, and the thread is told to stop through a shared
 *   Int32Array cancel word (one per thread) that the engine polls while it searches. A thread that has not stopped
 *   `stuckMs` later is terminated and replaced.
 *
 * Shared state (the road graph's SharedArrayBuffers, a database path) is given to every thread at start and can be
 * swapped in all of them with `update`; threads handle messages in order, so a task sent after the update sees the
 * new state. Threads run niced (Linux), so on a small machine a long search yields the CPU to the HTTP thread.
 * Under tsx (development, tests) the TypeScript worker module is bootstrapped through tsx's loader; the built
 * package runs the compiled .js. Idle threads never keep the process alive.
 */
export interface WorkerPoolOptions {
  /** Names the pool in errors and stats. */
  name: string;
  /** `import.meta.url` of the module next to the worker, and the worker module's base name (no extension). */
  here: string;
  module: string;
  size: number;
  queue: number;
  /** The code a task past a full queue is refused with (a run() may name another). */
  shedCode: ErrorCode;
  /** Default task deadline (ms from submission). */
  timeoutMs: number;
  /** The state every new thread starts with (the latest `update`). */
  init: unknown;
  /** How long an abandoned task may keep its thread before the thread is terminated and replaced. */
  stuckMs?: number;
  /**
   * Niceness of the threads (0 = as the process). The default, 8, gives the HTTP thread about 5.5 times an engine
   * thread's share of a contended core: hot requests stay fast and searches still progress. bench:mixed (100
   * copies, load generator and stream client on the same 2 cores): hot tile beside autocomplete 0.46x of alone at
   * 4, 0.51x at 8, 0.63x at 12; answers p50 unchanged, p99 13 / 17 / 29 ms. Routing threads run lower (route-pool.ts).
   */
  nice?: number;
}

export interface TaskOptions {
  signal?: AbortSignal;
  /** Overrides the pool's default deadline (ms from now). */
  timeoutMs?: number;
  shedCode?: ErrorCode;
}

/** Why a task was not answered: its deadline passed, its requester went away, or the pool is closed. */
export class TaskAbandoned extends Error {
  override name = 'TaskAbandoned';
  constructor(readonly reason: 'deadline' | 'aborted' | 'closed' | 'crashed') {
    super(`engine task abandoned: ${reason}`);
  }
}

export const isTaskAbandoned = (e: unknown): e is TaskAbandoned => e instanceof TaskAbandoned;

interface Task {
  id: number;
  payload: unknown;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
  signal?: AbortSignal;
  onAbort?: () => void;
  settled: boolean;
  slot?: Slot;
}

interface Slot {
  index: number;
  worker: Worker;
  /** The task the thread works on (also while abandoned, until the thread says it stopped). */
  task?: Task;
  /** Set when the running task was abandoned: the thread is replaced if it does not stop in time. */
  stuck?: NodeJS.Timeout;
  /** Updates the thread has not acknowledged yet. */
  updates: Map<number, () => void>;
  /** The thread has set its engine up (until then a task sent to it waits in its message queue). */
  ready: boolean;
  /** The thread has said whether its engine is set up (ready, or failed). */
  reported?: boolean;
  /** The thread died; its replacement is due after a back-off (threads that fail at start are not respawned hot). */
  dead?: boolean;
}

export interface WorkerPoolStats {
  size: number;
  active: number;
  queued: number;
  shed: number;
  expired: number;
  aborted: number;
  replaced: number;
  /** Tasks a thread answered (with a value or an error) while someone still waited for them. */
  completed: number;
  /** Parts of a task written by another thread of the pool than the one running it (routing: route-help.ts). */
  helped?: number;
  /**
   * Tasks run on the calling thread instead (routing: short routes while the HTTP thread is free, route-inline.ts):
   * answered there, or handed on to the pool after running over their budget.
   */
  inline?: { answered: number; handedOn: number };
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Task[] = [];
  private readonly cancel: Int32Array;
  private nextId = 1;
  private state: unknown;
  private closed = false;
  /** Threads in a row that died before their engine was set up: the next one starts after a growing back-off. */
  private startFailures = 0;
  private readonly counts = { shed: 0, expired: 0, aborted: 0, replaced: 0, completed: 0 };

  constructor(private readonly o: WorkerPoolOptions) {
    if (o.size < 1) throw new Error(`${o.name} pool needs at least one thread`);
    this.cancel = new Int32Array(new SharedArrayBuffer(4 * o.size));
    this.state = o.init;
    for (let i = 0; i < o.size; i++) this.slots.push(this.spawn(i));
  }

  get stats(): WorkerPoolStats {
    return {
      size: this.o.size,
      active: this.slots.filter((s) => s.task).length,
      queued: this.waiting.length,
      ...this.counts,
    };
  }

  get name(): string {
    return this.o.name;
  }

  /** At least one thread has its engine set up (callers may keep small work on the event loop until then). */
  get ready(): boolean {
    return this.slots.some((s) => s.ready && !s.dead);
  }

  /** A thread is still setting its engine up: a task sent now waits for it (bounded by its deadline). */
  get starting(): boolean {
    return this.slots.some((s) => !s.reported && !s.dead);
  }

  /** Runs one task on a free thread, or queues it; rejects with AppError(shed code) past a full queue. */
  run<R>(payload: unknown, opts: TaskOptions = {}): Promise<R> {
    if (this.closed) return Promise.reject(new TaskAbandoned('closed'));
    if (opts.signal?.aborted) return Promise.reject(new TaskAbandoned('aborted'));
    const free = this.freeSlot();
    if (!free && this.waiting.length >= this.o.queue) {
      this.counts.shed++;
      return Promise.reject(new AppError(opts.shedCode ?? this.o.shedCode));
    }
    return new Promise<R>((resolve, reject) => {
      const task: Task = {
        id: this.nextId++,
        payload,
        resolve,
        reject,
        settled: false,
        signal: opts.signal,
      };
      task.timer = setTimeout(() => this.abandon(task, 'deadline'), opts.timeoutMs ?? this.o.timeoutMs);
      if (opts.signal) {
        task.onAbort = () => this.abandon(task, 'aborted');
        opts.signal.addEventListener('abort', task.onAbort, { once: true });
      }
      if (free) this.start(free, task);
      else this.waiting.push(task);
    });
  }

  /** Gives every thread new shared state (and every thread started later); resolves when all have taken it. */
  async update(state: unknown): Promise<void> {
    this.state = state;
    await Promise.all(
      this.slots.map((slot) =>
        slot.dead
          ? Promise.resolve() // its replacement starts with the new state
          : new Promise<void>((done) => {
              const id = this.nextId++;
              slot.updates.set(id, done);
              slot.worker.postMessage({ t: 'update', id, p: state } satisfies HostRequest);
            }),
      ),
    );
  }

  /** Stops every thread; queued and running tasks are rejected. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.waiting.splice(0)) this.settle(t, new TaskAbandoned('closed'));
    for (const s of this.slots) {
      if (s.task) this.settle(s.task, new TaskAbandoned('closed'));
      clearTimeout(s.stuck);
      for (const done of s.updates.values()) done();
      void s.worker.terminate();
    }
  }

  private spawn(index: number): Slot {
    Atomics.store(this.cancel, index, 0);
    const data: HostData = { slot: index, cancel: this.cancel, init: this.state, nice: this.o.nice ?? 8 };
    const worker = startModuleWorker(this.o.here, this.o.module, data);
    worker.unref();
    const slot: Slot = { index, worker, updates: new Map(), ready: false };
    worker.on('message', (m: HostReply) => this.reply(slot, m));
    const fail = (e: Error) => this.crashed(slot, e);
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed && this.slots[index] === slot) fail(new Error(`${this.o.name} thread exited with code ${code}`));
    });
    return slot;
  }

  /**
   * The thread a new task goes to: a free one that is set up; else, while another is set up, none (the task waits
   * in line for it: a thread still setting up may be waiting its turn for seconds, see places-worker.ts); else any
   * free one, which takes the task once it is set up.
   */
  private freeSlot(): Slot | undefined {
    const free = this.slots.filter((s) => !s.task && !s.dead);
    const ready = free.find((s) => s.ready);
    if (ready || !free.length) return ready;
    return this.ready && this.waiting.length < this.o.queue ? undefined : free[0];
  }

  private start(slot: Slot, task: Task): void {
    slot.task = task;
    task.slot = slot;
    slot.worker.ref(); // a thread with work keeps the process alive until it answers
    slot.worker.postMessage({ t: 'run', id: task.id, p: task.payload } satisfies HostRequest);
  }

  private reply(slot: Slot, m: HostReply): void {
    if (m.id === READY) {
      slot.ready = m.ok;
      slot.reported = true;
      if (m.ok) this.startFailures = 0;
      // tasks may be waiting in line for a thread that is set up (freeSlot)
      if (m.ok && !slot.task) this.free(slot);
      return;
    }
    const done = slot.updates.get(m.id);
    if (done) {
      slot.updates.delete(m.id);
      return done();
    }
    const task = slot.task;
    if (!task || task.id !== m.id) return;
    if (!task.settled) this.counts.completed++;
    if (m.ok) this.settle(task, undefined, m.v);
    else this.settle(task, Object.assign(new Error(m.e ?? `${this.o.name} task failed`), { name: m.n ?? 'Error' }));
    this.free(slot);
  }

  /** The thread is done with its task (answered, or stopped after an abandon): it takes the next one in line. */
  private free(slot: Slot): void {
    clearTimeout(slot.stuck);
    slot.stuck = undefined;
    slot.task = undefined;
    if (this.closed) return;
    const next = this.waiting.shift();
    if (next) this.start(slot, next);
    else slot.worker.unref();
  }

  private abandon(task: Task, reason: 'deadline' | 'aborted'): void {
    if (task.settled) return;
    this.counts[reason === 'deadline' ? 'expired' : 'aborted']++;
    this.settle(task, new TaskAbandoned(reason));
    const slot = task.slot;
    if (!slot) {
      const i = this.waiting.indexOf(task);
      if (i >= 0) this.waiting.splice(i, 1);
      return;
    }
    // Running: ask the thread to stop; it answers (as cancelled) at its next check, which frees the slot.
    Atomics.store(this.cancel, slot.index, task.id);
    slot.stuck = setTimeout(() => this.replace(slot), this.o.stuckMs ?? 1000);
    slot.stuck.unref();
  }

  private settle(task: Task, err?: Error, value?: unknown): void {
    if (task.settled) return;
    task.settled = true;
    clearTimeout(task.timer);
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    if (err) task.reject(err);
    else task.resolve(value);
  }

  /**
   * A thread that ignored its cancel word (or crashed) is terminated; a fresh one takes its place, at once when the
   * old one had been working, after a growing back-off (up to 30 s) when threads keep dying before they are set up.
   */
  private replace(slot: Slot): void {
    if (this.closed || this.slots[slot.index] !== slot || slot.dead) return;
    this.counts.replaced++;
    slot.dead = true;
    for (const done of slot.updates.values()) done(); // the fresh thread starts with the latest state
    slot.updates.clear();
    void slot.worker.terminate();
    if (slot.task) this.settle(slot.task, new TaskAbandoned('crashed'));
    slot.task = undefined;
    clearTimeout(slot.stuck);
    if (!slot.ready) this.startFailures++;
    const respawn = () => {
      if (this.closed || this.slots[slot.index] !== slot) return;
      const fresh = this.spawn(slot.index);
      this.slots[slot.index] = fresh;
      const next = this.waiting.shift();
      if (next) this.start(fresh, next);
    };
    if (this.startFailures <= 1) return respawn();
    setTimeout(respawn, Math.min(30_000, 100 * 2 ** this.startFailures)).unref();
  }

  private crashed(slot: Slot, e: Error): void {
    // the pool has no app logger (its owners are engines): a process warning reaches the server's stderr
    if (!this.closed && !slot.dead)
      processWarnings.warn(`${this.o.name} thread failed; replacing it`, { error: e.message });
    this.replace(slot);
  }
}
