import { AppError, type ErrorCode } from '../core/errors.js';

/**
 * A bounded worker pool for one capability: up to `concurrency` jobs run, up to `queue` wait, and anything
 * beyond is shed at once with the capability's *_BACKPRESSURE code instead of piling up latency.
 */
export class Pool {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly name: string,
    private readonly concurrency: number,
    private readonly queue: number,
    private readonly shedCode: ErrorCode,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  get saturated(): boolean {
    return this.running >= this.concurrency && this.waiting.length >= this.queue;
  }

  async run<T>(job: () => Promise<T> | T): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) throw new AppError(this.shedCode);
      // The finishing job hands its slot straight to the waiter, so `running` never overshoots.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** Starts the job only if a slot is free now; false when saturated (used for best-effort background work). */
  tryStart(job: () => Promise<unknown>): boolean {
    if (this.running >= this.concurrency) return false;
    this.running++;
    void Promise.resolve()
      .then(job)
      .catch(() => undefined)
      .finally(() => this.release());
    return true;
  }
}
