/** Time source, injectable so expiry, windows and quota resets can be tested without sleeping. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export const nowSeconds = (clock: Clock): number => Math.floor(clock.nowMs() / 1000);

/** UTC calendar day `YYYY-MM-DD`, the unit of daily quotas (they reset at midnight UTC). */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
