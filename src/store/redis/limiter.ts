import type { RateLimiter } from '../../limits/ports.js';
import type { LimitDecision } from '../../limits/sliding-window.js';
import { luaScript, runScript, type RedisClient, type RedisFaults } from './client.js';

/**
 * The in-process sliding window (src/limits/sliding-window.ts), run atomically inside Redis so that every node
 * counts against one window per caller. Time is Redis's own clock, so nodes with skewed clocks still agree.
 * Returns {allowed, remaining, reset seconds, retry-after milliseconds}.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local start = now - (now % w)
local h = redis.call('HMGET', KEYS[1], 's', 'p', 'c')
local s = tonumber(h[1])
local p = tonumber(h[2]) or 0
local c = tonumber(h[3]) or 0
if not s then
  s = start; p = 0; c = 0
elseif s ~= start then
  if start - s == w then p = c else p = 0 end
  c = 0; s = start
end
local elapsed = now - start
local used = p * (w - elapsed) / w + c
local resetS = math.max(1, math.ceil((w - elapsed) / 1000))
if used + 1 <= limit then
  c = c + 1
  redis.call('HSET', KEYS[1], 's', s, 'p', p, 'c', c)
  redis.call('PEXPIRE', KEYS[1], w * 2)
  return {1, math.max(0, math.floor(limit - used - 1)), resetS, 0}
end
redis.call('HSET', KEYS[1], 's', s, 'p', p, 'c', c)
redis.call('PEXPIRE', KEYS[1], w * 2)
local at
if c + 1 <= limit and p > 0 then
  at = w * (1 - (limit - c - 1) / p)
elseif c > 0 then
  at = w + math.max(0, w * (1 - (limit - 1) / c))
else
  at = w
end
return {0, 0, resetS, math.max(1, math.ceil((at - elapsed) / 1000)) * 1000}
`;
const SCRIPT_LUA = luaScript('sliding-window', SCRIPT);

export class RedisSlidingWindow implements RateLimiter {
  constructor(
    private readonly client: RedisClient,
    private readonly faults: RedisFaults,
    private readonly prefix = 'svcmaps:rl:',
    private readonly windowMs = 60_000,
    private readonly timeoutMs = 250,
  ) {}

  /** `undefined` when Redis is down or slow: the pipeline then fails open. */
  hit(id: string, limit: number): Promise<LimitDecision | undefined> {
    const args = ['1', this.prefix + id, String(limit), String(this.windowMs)];
    return runScript(this.client, this.faults, SCRIPT_LUA, args, this.timeoutMs, (r) => {
      const [allowed, remaining, resetS, retryMs] = r as number[];
      return { allowed: allowed === 1, limit, remaining, resetS, retryAfterS: retryMs! / 1000 } as LimitDecision;
    });
  }
}
