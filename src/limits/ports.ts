import type { Bucket, UsageDelta } from '../store/usage-repo.js';
import type { LimitDecision } from './sliding-window.js';

/**
 * A per-minute limiter. The in-process one answers synchronously; a shared one (Redis) answers with a promise,
 * or `undefined` when it cannot decide (its backend is down): the caller then fails open.
 */
export interface RateLimiter {
  hit(id: string, limit: number, nowMs: number): LimitDecision | Promise<LimitDecision | undefined>;
}

/**
 * The daily quota's admission decision shared by several nodes (Redis): `take` claims one unit of the key's quota
 * for the UTC day and bucket if fewer than `limit` are claimed, atomically; `floor` is what the durable record says
 * is used already (the counter is raised to it first). true: taken; false: exhausted; undefined: the shared store
 * cannot decide (down or slow), and the caller falls back to the meter's count (limits fail open on faults).
 * `give` returns a unit taken by a request that turned out not to be a miss.
 */
export interface SharedQuota {
  take(id: string, day: string, bucket: Bucket, limit: number, floor: number): Promise<boolean | undefined>;
  give(id: string, day: string, bucket: Bucket): void;
}

/** Daily usage counters, written in batches by the meter. */
export interface UsageStore {
  apply(deltas: UsageDelta[]): void | Promise<void>;
  /** Misses stored for the key, day and bucket (a cluster store may answer from its last read). */
  misses(keyId: string, day: string, bucket: Bucket): number;
}
