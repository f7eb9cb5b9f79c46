import type { Bucket, UsageDelta } from '../store/usage-repo.js';
import type { LimitDecision } from './sliding-window.js';

/**
 * A per-minute limiter. The in-process one answers synchronously; a shared one (Redis) answers with a promise,
 * or `undefined` when it cannot decide (its backend is down): the caller then fails open.
 */
export interface RateLimiter {
  hit(id: string, limit: number, nowMs: number): LimitDecision | Promise<LimitDecision | undefined>;
}

/** Daily usage counters, written in batches by the meter. */
export interface UsageStore {
  apply(deltas: UsageDelta[]): void | Promise<void>;
  /** Misses stored for the key, day and bucket (a cluster store may answer from its last read). */
  misses(keyId: string, day: string, bucket: Bucket): number;
}
