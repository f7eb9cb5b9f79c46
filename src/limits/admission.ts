/**
 * Admission control with deadlines for expensive work (tile renders, static maps). Up to `concurrency` jobs run;
 * the rest wait in bounded per-lane queues, interactive ahead of batch. A job is refused at once (never queued) when
 * its lane's queue is full or when the time it would wait, predicted from the recent job time, exceeds its lane's
 * wait budget. A queued job whose deadline passes, or whose requester goes away (its AbortSignal fires), is dropped
 * and never started: under a burst the work done goes to answers somebody still waits for.
 */

/** `interactive`: a person waits for it (a cold tile on a map being panned). `batch`: static maps, prefetch, seeding. */
export type Lane = 'interactive' | 'batch';
const LANES: readonly Lane[] = ['interactive', 'batch'];

interface LaneBudget {
  /** Jobs that may wait for a slot; one more is refused at once. */
  queue: number;
  /** The longest a job may wait for a slot; a job predicted to wait longer is refused at once. */
  waitMs: number;
}

export interface AdmissionOptions {
  concurrency: number;
  lanes: Partial<Record<Lane, LaneBudget>>;
  /**
   * Slots only the interactive lane may take (default 0): batch work never holds more than `concurrency - reserved`,
   * so a person's cold tile starts at once however many static maps are drawing.
   */
  reserved?: number;
}

/**
 * Why a job was not run: `full` (lane queue at its bound) and `late` (predicted to miss its deadline) are refused at
 * admission; `expired` (deadline passed while queued) and `gone` (requester aborted) are dropped from the queue.
 */
export type RefusalReason = 'full' | 'late' | 'expired' | 'gone';

export class AdmissionRefused extends Error {
  override name = 'AdmissionRefused';
  constructor(
    readonly reason: RefusalReason,
    readonly lane: Lane,
    message: string,
    /** When to come back: the predicted wait of the lane at refusal time, whole seconds (see retryAfterS). */
    readonly retryAfterS = RETRY_AFTER_MIN_S,
  ) {
    super(message);
  }
}

export const isAdmissionRefused = (e: unknown): e is AdmissionRefused => e instanceof AdmissionRefused;

export interface RunOptions {
  /** The requester's signal: once it fires, the job is dropped if it has not started yet. */
  signal?: AbortSignal;
  /** Overrides the lane's wait budget (e.g. work of a request that was admitted upstream, with its own deadline). */
  waitMs?: number;
  /**
   * false: no refusal on the predicted wait (only on a full queue or the deadline). For the parts of work admitted
   * upstream (a static map's basemap tiles): refusing one would throw away the map already under way.
   */
  predict?: boolean;
  /** Filled in when the job is queued: promote() moves it to the interactive lane (a person now waits for it). */
  ticket?: Ticket;
}

export interface Ticket {
  promote?: () => void;
}

/** A queued job; its lane may be raised (batch -> interactive) while it waits. */
interface Entry {
  lane: Lane;
  deadline: number;
  start(): void;
  refuse(reason: RefusalReason): void;
  settled: boolean;
}

/** Jobs per lane by what became of them: started, refused at admission (`full`, `late`), dropped while queued. */
export type LaneStats = { started: number } & Record<RefusalReason, number>;

/** Weight of the newest job time in the moving average: mostly the last half-dozen completions count. */
const EWMA_ALPHA = 0.3;
/** Retry-After bounds on a refusal: a client never retries at once, and is never told to go away for minutes. */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 30;

export class Admission {
  private running = 0;
  private readonly queues = new Map<Lane, Entry[]>();
  private readonly live = new Map<Lane, number>();
  /** Moving average of a started job's run time in ms (0 until the first job finished). */
  private avgMs = 0;
  /** The last three job times: the average takes their median (see sample()). */
  private readonly recent: number[] = [];
  /** Start times of the running jobs (at most `concurrency`). */
  private readonly startedAt = new Set<number>();
  /** Finished jobs; the first `concurrency` are not sampled (each slot's first job pays its start-up, e.g. a thread). */
  private finished = 0;
  readonly stats: Record<Lane, LaneStats> = {
    interactive: { started: 0, full: 0, late: 0, expired: 0, gone: 0 },
    batch: { started: 0, full: 0, late: 0, expired: 0, gone: 0 },
  };

  constructor(
    readonly name: string,
    private readonly o: AdmissionOptions,
  ) {
    for (const lane of LANES) {
      this.queues.set(lane, []);
      this.live.set(lane, 0);
    }
  }

  get active(): number {
    return this.running;
  }

  get concurrency(): number {
    return this.o.concurrency;
  }

  /** The lanes this admission has a budget for. */
  get lanes(): Lane[] {
    return LANES.filter((l) => this.o.lanes[l]);
  }

  /** Jobs waiting in `lane` (or in every lane). */
  queued(lane?: Lane): number {
    return lane ? this.live.get(lane)! : LANES.reduce((n, l) => n + this.live.get(l)!, 0);
  }

  /** The moving average of a job's run time, in ms. */
  get averageMs(): number {
    return this.avgMs;
  }

  /**
   * The time a job takes now: the moving average over recent completions, but never less than the age of the
   * youngest running job while every slot is busy. When a burst makes jobs suddenly slower, no job may finish for a
   * while, and the average alone would still describe the time before the burst.
   */
  serviceMs(): number {
    if (this.running < this.o.concurrency || this.startedAt.size === 0) return this.avgMs;
    let youngest = -Infinity;
    for (const t of this.startedAt) youngest = Math.max(youngest, t);
    return Math.max(this.avgMs, performance.now() - youngest);
  }

  /**
   * Predicted wait for a job entering `lane` now: the jobs ahead of it (every queued interactive job, plus queued
   * batch jobs for a batch job) drain at `concurrency` per job time.
   */
  predictedWaitMs(lane: Lane): number {
    // Predictions start once a few jobs per slot were measured after the first ones.
    if (this.running < this.slotsFor(lane) || this.finished < 3 * this.o.concurrency) return 0;
    return this.drainMs(lane);
  }

  /**
   * Retry-After for work refused from `lane` now: the time the work ahead of it needs to drain, in whole seconds,
   * within [RETRY_AFTER_MIN_S, RETRY_AFTER_MAX_S]. Unlike the refusal itself it uses any measured job time, even
   * before predictions start: a rough hint beats a constant.
   */
  retryAfterS(lane: Lane): number {
    const s = Math.ceil(this.drainMs(lane) / 1000);
    return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, s));
  }

  private drainMs(lane: Lane): number {
    const ahead = lane === 'interactive' ? this.queued('interactive') : this.queued();
    return ((ahead + 1) * this.serviceMs()) / this.slotsFor(lane);
  }

  /** The slots `lane` may hold: all of them for interactive work, all but the reserved ones for batch work. */
  private slotsFor(lane: Lane): number {
    return lane === 'interactive' ? this.o.concurrency : Math.max(1, this.o.concurrency - (this.o.reserved ?? 0));
  }

  /** Whether a job would start at once (a free slot its lane may take, nobody queued ahead of it). */
  private startsNow(lane: Lane): boolean {
    return (
      this.running < this.slotsFor(lane) && (lane === 'interactive' ? this.queued('interactive') : this.queued()) === 0
    );
  }

  /**
   * What run() would do with a job entering `lane` now, without queuing anything: undefined when it would start or
   * wait, else the refusal with its Retry-After. Lets a request be refused before any of its other work is done.
   */
  wouldRefuse(lane: Lane): { reason: 'full' | 'late'; retryAfterS: number } | undefined {
    const budget = this.o.lanes[lane];
    if (!budget || this.startsNow(lane)) return undefined;
    const r = this.refusalOf(lane, budget.queue, budget.waitMs, true);
    return r && { reason: r.reason, retryAfterS: this.retryAfterS(lane) };
  }

  /** Why a job entering `lane` now, and not starting at once, is refused: its lane's queue full, or too long a wait. */
  private refusalOf(
    lane: Lane,
    queue: number,
    waitMs: number,
    predict: boolean,
  ): { reason: 'full' | 'late'; detail?: string } | undefined {
    if (this.live.get(lane)! >= queue) return { reason: 'full' };
    const predicted = predict ? this.predictedWaitMs(lane) : 0;
    if (predicted > waitMs) return { reason: 'late', detail: `predicted wait ${Math.round(predicted)} ms` };
    return undefined;
  }

  /** Counts a refusal decided with wouldRefuse() (the job never reached run()). */
  countRefusal(lane: Lane, reason: 'full' | 'late'): void {
    this.stats[lane][reason]++;
  }

  run<T>(lane: Lane, job: () => Promise<T>, opts: RunOptions = {}): Promise<T> {
    const budget = this.o.lanes[lane];
    if (!budget) return Promise.reject(new Error(`admission ${this.name}: no ${lane} lane`));
    if (opts.signal?.aborted) return this.refused(lane, 'gone');
    if (this.startsNow(lane)) {
      this.running++;
      this.stats[lane].started++;
      return this.execute(job);
    }
    const waitMs = opts.waitMs ?? budget.waitMs;
    const refusal = this.refusalOf(lane, budget.queue, waitMs, opts.predict !== false);
    if (refusal) return this.refused(lane, refusal.reason, refusal.detail);

    return new Promise<T>((resolve, reject) => {
      const entry: Entry = {
        lane,
        deadline: performance.now() + waitMs,
        settled: false,
        start: () => {
          cleanup();
          this.stats[entry.lane].started++;
          this.execute(job).then(resolve, reject);
        },
        refuse: (reason) => {
          cleanup();
          this.stats[entry.lane][reason === 'gone' ? 'gone' : 'expired']++;
          const retry = this.retryAfterS(entry.lane);
          reject(new AdmissionRefused(reason, entry.lane, `${this.name}: ${reason} while queued`, retry));
        },
      };
      const onAbort = () => this.drop(entry, 'gone');
      const timer = setTimeout(() => this.drop(entry, 'expired'), waitMs);
      timer.unref();
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.ticket) opts.ticket.promote = () => this.promote(entry);
      this.queues.get(lane)!.push(entry);
      this.live.set(lane, this.live.get(lane)! + 1);
      this.pump();
    });
  }

  private promote(entry: Entry): void {
    if (entry.settled || entry.lane === 'interactive' || !this.o.lanes.interactive) return;
    this.live.set(entry.lane, this.live.get(entry.lane)! - 1);
    entry.lane = 'interactive';
    this.queues.get('interactive')!.push(entry); // its stale batch place is skipped when reached
    this.live.set('interactive', this.live.get('interactive')! + 1);
  }

  private refused<T>(lane: Lane, reason: 'full' | 'late' | 'gone', detail?: string): Promise<T> {
    this.stats[lane][reason]++;
    const retry = this.retryAfterS(lane);
    return Promise.reject(new AdmissionRefused(reason, lane, `${this.name}: ${detail ?? reason} (${lane})`, retry));
  }

  private drop(entry: Entry, reason: 'expired' | 'gone'): void {
    if (entry.settled) return;
    entry.settled = true;
    this.live.set(entry.lane, this.live.get(entry.lane)! - 1);
    entry.refuse(reason);
    // Dropped entries leave the queue when reached; while every slot is busy they are swept out in bulk instead.
    const q = this.queues.get(entry.lane)!;
    if (q.length > 2 * this.live.get(entry.lane)! + 64)
      this.queues.set(
        entry.lane,
        q.filter((e) => !e.settled && e.lane === entry.lane),
      );
  }

  private execute<T>(job: () => Promise<T>): Promise<T> {
    let t0 = performance.now();
    while (this.startedAt.has(t0)) t0 += 1e-6; // two starts within the timer's resolution keep one entry each
    this.startedAt.add(t0);
    let p: Promise<T>;
    try {
      p = job();
    } catch (e) {
      p = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    return p.finally(() => {
      this.startedAt.delete(t0);
      if (++this.finished > this.o.concurrency) this.sample(performance.now() - t0);
      this.running--;
      this.pump();
    });
  }

  /**
   * Feeds one job time into the moving average through the median of the last three: one outlier (a GC pause, a
   * cold start) is ignored, while a change that holds for two jobs in a row moves the average at once.
   */
  private sample(ms: number): void {
    const r = this.recent;
    r.push(ms);
    if (r.length > 3) r.shift();
    const m = r.length < 3 ? ms : [...r].sort((a, b) => a - b)[1]!;
    this.avgMs = this.avgMs === 0 ? m : this.avgMs + EWMA_ALPHA * (m - this.avgMs);
  }

  /**
   * Starts queued jobs while slots are free, interactive first, batch only within its share of the slots; settled
   * (dropped, promoted) entries are skipped.
   */
  private pump(): void {
    while (this.running < this.o.concurrency) {
      const entry = this.next(this.running < this.slotsFor('batch'));
      if (!entry) return;
      entry.settled = true;
      this.live.set(entry.lane, this.live.get(entry.lane)! - 1);
      if (performance.now() > entry.deadline) {
        entry.refuse('expired');
        continue;
      }
      this.running++;
      entry.start();
    }
  }

  private next(batchToo: boolean): Entry | undefined {
    for (const lane of batchToo ? LANES : (['interactive'] as const)) {
      const q = this.queues.get(lane)!;
      while (q.length) {
        const e = q.shift()!;
        if (!e.settled && e.lane === lane) return e;
      }
    }
    return undefined;
  }
}
