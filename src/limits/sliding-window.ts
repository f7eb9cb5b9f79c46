import type { LRUCache } from 'lru-cache';
import { growingLru } from '../core/growing-lru.js';

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (RateLimit-Reset). */
  resetS: number;
  /** Seconds to wait before a retry can succeed; 0 when allowed. */
  retryAfterS: number;
}

interface Counter {
  start: number;
  prev: number;
  curr: number;
}

/**
 * Sliding-window counter (the previous window's count weighted by its overlap with the last minute, plus the
 * current window's). Unlike fixed windows it does not let a client send twice the limit across a boundary,
 * and it needs two integers per caller instead of a log of timestamps.
 */
export class SlidingWindowLimiter {
  private readonly counters: LRUCache<string, Counter>;

  constructor(
    private readonly windowMs = 60_000,
    maxCallers = 100_000,
  ) {
    this.counters = growingLru(maxCallers);
  }

  hit(id: string, limit: number, nowMs: number): LimitDecision {
    const w = this.windowMs;
    const start = nowMs - (nowMs % w);
    let c = this.counters.get(id);
    if (!c) {
      c = { start, prev: 0, curr: 0 };
      this.counters.set(id, c);
    } else if (c.start !== start) {
      c.prev = start - c.start === w ? c.curr : 0;
      c.curr = 0;
      c.start = start;
    }
    const elapsed = nowMs - start;
    const weight = (w - elapsed) / w;
    const used = c.prev * weight + c.curr;
    const resetS = Math.max(1, Math.ceil((w - elapsed) / 1000));
    if (used + 1 <= limit) {
      c.curr++;
      return { allowed: true, limit, remaining: Math.max(0, Math.floor(limit - used - 1)), resetS, retryAfterS: 0 };
    }
    return { allowed: false, limit, remaining: 0, resetS, retryAfterS: this.waitMs(c, limit, elapsed) / 1000 };
  }

  /** Milliseconds until one more request fits, rounded up to whole seconds (at least 1). */
  private waitMs(c: Counter, limit: number, elapsed: number): number {
    const w = this.windowMs;
    let at: number; // elapsed time (from this window's start) at which the request fits
    if (c.curr + 1 <= limit && c.prev > 0) {
      at = w * (1 - (limit - c.curr - 1) / c.prev);
    } else {
      // Only after this window ends: next window, prev' = curr, curr' = 0.
      at = w + (c.curr > 0 ? Math.max(0, w * (1 - (limit - 1) / c.curr)) : 0);
    }
    return Math.max(1, Math.ceil((at - elapsed) / 1000)) * 1000;
  }
}
