import { processWarnings, type Logger } from '../../core/log.js';

/**
 * Time slices for request intake. libuv hands the event loop every socket that became readable at once, and uWS calls
 * the request handler for each before the loop does anything else: a burst of a thousand cold tiles or static maps
 * (0.1-0.2 ms of pipeline work each: auth, limits, a warm-store lookup, admission) kept the loop for 150 ms, and a
 * /livez or a hot tile that arrived behind them waited as long. Once the current turn has spent `sliceMs` on
 * requests, further ones are queued here (in arrival order) and run in slices of `sliceMs` between turns of the loop,
 * so sockets are read again between slices. Requests that answer at once from memory (health, a hot tile) skip the
 * queue: the adapter asks the app before queuing.
 */
export class Backlog {
  private readonly queue: (() => void)[] = [];
  private head = 0;
  /** When the current turn's first request started; 0 until one arrives in this turn. */
  private turnStart = 0;
  private draining = false;

  constructor(
    private readonly sliceMs = 4,
    private readonly now: () => number = () => performance.now(),
    /** Where a queued run that throws is told (it answers its own failures: one that escapes is a bug). */
    private readonly log: Logger = processWarnings,
  ) {}

  /** True when a request now should wait its turn: this turn has used its slice, or earlier ones are still queued. */
  busy(): boolean {
    if (this.head < this.queue.length) return true;
    const now = this.now();
    if (this.turnStart === 0) {
      this.turnStart = now;
      setImmediate(this.newTurn);
      return false;
    }
    return now - this.turnStart > this.sliceMs;
  }

  get size(): number {
    return this.queue.length - this.head;
  }

  defer(run: () => void): void {
    this.queue.push(run);
    if (!this.draining) {
      this.draining = true;
      setImmediate(this.drain);
    }
  }

  private readonly newTurn = (): void => {
    this.turnStart = 0;
  };

  private readonly drain = (): void => {
    const end = this.now() + this.sliceMs;
    while (this.head < this.queue.length) {
      const run = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as () => void;
      try {
        run();
      } catch (e) {
        // run() answers its own failures; nothing may stop the queue
        this.log.error('queued request failed', { error: (e as Error)?.stack ?? String(e) });
      }
      if (this.now() >= end) break;
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      this.draining = false;
    } else {
      if (this.head > 4096) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      setImmediate(this.drain);
    }
  };
}
