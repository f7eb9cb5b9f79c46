import type { LimitDecision } from '../../limits/sliding-window.js';

/** Sets a rate-limit decision's RateLimit-* headers on a reply's headers. */
export function setRateLimitHeaders(h: Record<string, string>, d: LimitDecision): void {
  h['RateLimit-Limit'] = String(d.limit);
  h['RateLimit-Remaining'] = String(d.remaining);
  h['RateLimit-Reset'] = String(d.resetS);
}
