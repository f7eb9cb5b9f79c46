import { utcDay } from '../core/clock.js';
import type { Bucket, UsageDelta } from '../store/usage-repo.js';
import type { UsageStore } from './ports.js';

export interface MeterLog {
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Attributes every request to its key and counts daily misses for quotas. Counts accumulate in memory and are
 * written in one transaction per flush. A store fault never fails a request: metering and quotas fail open,
 * and unwritten deltas are kept for the next flush.
 */
export class Meter {
  private pending = new Map<string, UsageDelta>();
  /** Misses per key/day/bucket as stored at first sight, plus everything counted since. */
  private readonly missesToday = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repo: UsageStore,
    private readonly log: MeterLog,
    private readonly flushEveryMs = 1000,
  ) {}

  start(): void {
    if (this.timer || this.flushEveryMs <= 0) return;
    this.timer = setInterval(() => this.flush(), this.flushEveryMs);
    this.timer.unref();
  }

  /** utcDay() formats a date; requests arrive far more often than days change, so remember the last one. */
  private dayCache = { start: 0, end: 0, day: '' };

  /** The UTC day (YYYY-MM-DD) usage at `nowMs` counts against. */
  day(nowMs: number): string {
    const c = this.dayCache;
    if (nowMs < c.start || nowMs >= c.end) {
      const start = nowMs - (nowMs % 86_400_000);
      this.dayCache = { start, end: start + 86_400_000, day: utcDay(nowMs) };
    }
    return this.dayCache.day;
  }

  /** `keyId|day|bucket` strings for the current day, built once per key and bucket instead of once per request. */
  private names = new Map<string, Partial<Record<Bucket, string>>>();
  private namesDay = '';

  private entry(keyId: string, day: string, bucket: Bucket): string {
    if (day !== this.namesDay || this.names.size > 100_000) {
      this.names = new Map();
      this.namesDay = day;
    }
    let byBucket = this.names.get(keyId);
    if (!byBucket) this.names.set(keyId, (byBucket = {}));
    return (byBucket[bucket] ??= `${keyId}|${day}|${bucket}`);
  }

  record(keyId: string, bucket: Bucket, miss: boolean, nowMs: number): void {
    const day = this.day(nowMs);
    const k = this.entry(keyId, day, bucket);
    let d = this.pending.get(k);
    if (!d) this.pending.set(k, (d = { keyId, day, bucket, requests: 0, misses: 0, lastSeen: 0 }));
    d.requests++;
    d.lastSeen = Math.floor(nowMs / 1000);
    if (miss) {
      d.misses++;
      this.missesToday.set(k, this.misses(keyId, bucket, nowMs) + 1);
    }
  }

  /** Misses counted today (UTC) for the key and bucket, stored and pending. */
  misses(keyId: string, bucket: Bucket, nowMs: number): number {
    const day = this.day(nowMs);
    const k = this.entry(keyId, day, bucket);
    let n = this.missesToday.get(k);
    if (n === undefined) {
      try {
        n = this.repo.misses(keyId, day, bucket) + (this.pending.get(k)?.misses ?? 0);
      } catch (e) {
        this.log.warn('usage store unreadable; quota check fails open', { error: (e as Error).message });
        return 0;
      }
      if (this.missesToday.size > 100_000) this.missesToday.clear();
      this.missesToday.set(k, n);
    }
    return n;
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    try {
      const written = this.repo.apply(batch);
      // A shared store writes asynchronously; a failed batch is kept for the next flush all the same.
      if (written instanceof Promise)
        written.then(
          () => this.followStore(batch),
          (e: unknown) => this.keep(batch, e),
        );
    } catch (e) {
      this.keep(batch, e);
    }
  }

  /**
   * A shared store answers each write with the totals of every node: quota reads follow them, so a daily quota
   * holds across nodes within about one flush interval. Counts only grow here.
   */
  private followStore(batch: UsageDelta[]): void {
    for (const d of batch) {
      const k = `${d.keyId}|${d.day}|${d.bucket}`;
      const n = this.repo.misses(d.keyId, d.day, d.bucket) + (this.pending.get(k)?.misses ?? 0);
      if (n > (this.missesToday.get(k) ?? 0)) this.missesToday.set(k, n);
    }
  }

  private keep(batch: UsageDelta[], e: unknown): void {
    this.log.warn('usage flush failed; will retry', { error: (e as Error).message, rows: batch.length });
    for (const d of batch) {
      const k = `${d.keyId}|${d.day}|${d.bucket}`;
      const p = this.pending.get(k);
      if (p) {
        p.requests += d.requests;
        p.misses += d.misses;
        p.lastSeen = Math.max(p.lastSeen, d.lastSeen);
      } else this.pending.set(k, d);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
