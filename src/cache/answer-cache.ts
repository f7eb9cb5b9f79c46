import type { Logger } from '../core/log.js';
import type { AnswerCacheRepo } from '../store/answer-cache-repo.js';
import type { HotTier } from './hot-tier.js';

export type Tier = 'memory' | 'sqlite';

const WARM_MAX_AGE_S = 7 * 86400;
/** Answers longer than this (bytes) are not written to the warm tier. */
export const WARM_MAX_BYTES = 64 * 1024;

/**
 * Hot (LRU) then warm (SQLite) cache for JSON answers. Warm writes are buffered and written in one transaction per
 * flush; warm reads are promoted to the hot tier. Store faults are logged and treated as misses.
 */
export class AnswerCache {
  private pending = new Map<string, string | Buffer>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly hot: HotTier,
    private readonly warm: AnswerCacheRepo,
    private readonly log: Logger,
    flushEveryMs = 1000,
  ) {
    if (flushEveryMs > 0) {
      this.timer = setInterval(() => this.flush(), flushEveryMs);
      this.timer.unref();
    }
    try {
      this.warm.prune(Math.floor(Date.now() / 1000) - WARM_MAX_AGE_S);
    } catch (e) {
      this.log.warn('answer cache prune failed', { error: (e as Error).message });
    }
  }

  /** A JSON answer. */
  get<T>(key: string): { value: T; tier: Tier } | undefined {
    const hit = this.getBytes(key);
    return hit && { value: JSON.parse(hit.value.toString('utf8')) as T, tier: hit.tier };
  }

  set(key: string, value: unknown): void {
    const text = JSON.stringify(value);
    this.keep(key, Buffer.from(text), text);
  }

  /** An answer as bytes (UTF-8 JSON, or a binary form such as a cached route leg); `warm` false: the hot tier only. */
  getBytes(key: string, warm = true): { value: Buffer; tier: Tier } | undefined {
    const h = this.hot.get(key);
    if (h || !warm) return h && { value: h, tier: 'memory' };
    let stored = this.pending.get(key);
    try {
      stored ??= this.warm.get(key);
    } catch (e) {
      this.log.warn('warm cache read failed', { error: (e as Error).message });
    }
    if (stored === undefined) return undefined;
    const value = typeof stored === 'string' ? Buffer.from(stored) : stored;
    this.hot.set(key, value);
    return { value, tier: 'sqlite' };
  }

  /** `warm` false: kept in the hot tier only. */
  setBytes(key: string, value: Buffer, warm = true): void {
    this.keep(key, value, value, warm);
  }

  /** JSON answers reach SQLite as text, others as a BLOB. */
  private keep(key: string, bytes: Buffer, stored: string | Buffer, warm = true): void {
    this.hot.set(key, bytes);
    // A long route's answer is hundreds of KB: written to SQLite on the event loop, a second's worth of them held
    // every request for 100+ ms, and the file grew by that much per route. Such answers stay in the hot tier only.
    if (!warm || bytes.length > WARM_MAX_BYTES) return;
    this.pending.set(key, stored);
    if (this.pending.size >= 5000) this.flush();
  }

  flush(): void {
    if (!this.pending.size) return;
    const now = Math.floor(Date.now() / 1000);
    const rows = [...this.pending].map(([k, v]) => [k, v, now] as [string, string | Buffer, number]);
    this.pending = new Map();
    try {
      this.warm.putMany(rows);
    } catch (e) {
      this.log.warn('warm cache write failed; answers stay in memory only', { error: (e as Error).message });
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.flush();
  }
}
