import { AppError, isAppError, type ErrorCode } from '../core/errors.js';
import { processWarnings, type Logger } from '../core/log.js';

/**
 * A bounded worker pool for one capability: up to `concurrency` jobs run, up to `queue` wait, and anything
 * beyond is shed at once with the capability's *_BACKPRESSURE code instead of piling up latency.
 */
export class Pool {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Background jobs (tryStart) that failed: nobody awaits them, so each is logged and counted here. */
  private failures = 0;

  constructor(
    readonly name: string,
    private readonly concurrency: number,
    private readonly queue: number,
    private readonly shedCode: ErrorCode,
    private readonly log: Logger = processWarnings,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Background jobs (tryStart) that ended in an error since the pool was made. */
  get failed(): number {
    return this.failures;
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

  /**
   * Starts the job only if a slot is free now; false when saturated (used for best-effort background work). The
   * caller has its answer (queued) before the job runs, so a job that fails is logged and counted here.
   */
  tryStart(job: () => Promise<unknown>): boolean {
    if (this.running >= this.concurrency) return false;
    this.running++;
    void Promise.resolve()
      .then(job)
      .catch((e: unknown) => this.recordFailure(e))
      .finally(() => this.release());
    return true;
  }

  /** A refusal the job met (a 4xx code) is an info line, a 5xx code a warning, anything else an error. */
  private recordFailure(e: unknown): void {
    this.failures++;
    if (!isAppError(e))
      this.log.error('background job failed', { pool: this.name, error: (e as Error)?.stack ?? String(e) });
    else if (e.status >= 500)
      this.log.warn('background job failed', { pool: this.name, code: e.code, error: e.message });
    else this.log.info('background job refused', { pool: this.name, code: e.code });
  }
}
