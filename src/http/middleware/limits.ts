import type { LimitDecision } from '../../limits/sliding-window.js';

export const rateLimitHeaders = (d: LimitDecision): Record<string, string> => ({
  'RateLimit-Limit': String(d.limit),
  'RateLimit-Remaining': String(d.remaining),
  'RateLimit-Reset': String(d.resetS),
});
