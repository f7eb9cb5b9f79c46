import type { SharedQuota } from '../../limits/ports.js';
import type { Bucket } from '../usage-repo.js';
import { luaScript, runScript, type RedisClient, type RedisFaults } from './client.js';

/**
 * Takes one unit of a key's daily quota (one counter per key, UTC day and bucket) if fewer than the limit are taken,
 * in one atomic step on Redis, so two nodes can never both admit the last unit. ARGV: limit, floor, ttl seconds.
 * The floor is the asking node's count from the durable record (PostgreSQL plus its unflushed misses): a counter
 * that Redis lost (restart, eviction) or that missed requests admitted while Redis was down is raised to it first.
 */
const TAKE = luaScript(
  'quota-take',
  `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[2])
if floor > n then n = floor end
if n >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], n, 'EX', ARGV[3])
  return 0
end
redis.call('SET', KEYS[1], n + 1, 'EX', ARGV[3])
return 1
`,
);

/** Gives back a unit taken for a request that was not a miss after all (a cache hit, or an error). */
const GIVE = luaScript(
  'quota-give',
  `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return n
`,
);

/**
 * The daily quota's admission decision in cluster mode: exact across nodes, because the check and the increment are
 * one script. A request takes a unit before its handler runs and gives it back unless it turned out a miss, so
 * concurrent requests never overshoot either (one may be refused while a unit it could have had is in flight).
 * PostgreSQL metering stays the durable record; this counter only decides.
 */
export class RedisDailyQuota implements SharedQuota {
  constructor(
    private readonly client: RedisClient,
    private readonly faults: RedisFaults,
    private readonly prefix = 'svcmaps:quota:',
    private readonly timeoutMs = 250,
    /** Counters outlive their UTC day by a day, then Redis drops them. */
    private readonly ttlS = 2 * 86_400,
  ) {}

  private key(id: string, day: string, bucket: Bucket): string {
    return `${this.prefix}${day}:${bucket}:${id}`;
  }

  take(id: string, day: string, bucket: Bucket, limit: number, floor: number): Promise<boolean | undefined> {
    const args = ['1', this.key(id, day, bucket), String(limit), String(floor), String(this.ttlS)];
    return runScript(this.client, this.faults, TAKE, args, this.timeoutMs, (r) => r === 1);
  }

  give(id: string, day: string, bucket: Bucket): void {
    void runScript(this.client, this.faults, GIVE, ['1', this.key(id, day, bucket)], this.timeoutMs, () => undefined);
  }
}
