import type { SharedSessions } from '../../auth/ports.js';
import { luaScript, runScript, type RedisClient, type RedisFaults } from './client.js';

/**
 * One hash per subject, sid -> rank. A session keeps the rank it was first recorded with (HSETNX); the newest is the
 * highest rank, ties broken by the greater sid (the SQLite store's order). The hash lives as long as its
 * longest-lived session.
 */
const SCRIPT = `
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
local all = redis.call('HGETALL', KEYS[1])
local best, bestRank = '', -1
for i = 1, #all, 2 do
  local r = tonumber(all[i + 1])
  if r > bestRank or (r == bestRank and all[i] > best) then best = all[i]; bestRank = r end
end
local ttl = tonumber(ARGV[3])
if ttl > redis.call('TTL', KEYS[1]) then redis.call('EXPIRE', KEYS[1], ttl) end
return {best, tostring(bestRank)}
`;
const SCRIPT_LUA = luaScript('sessions', SCRIPT);

export class RedisSessions implements SharedSessions {
  constructor(
    private readonly client: RedisClient,
    private readonly faults: RedisFaults,
    private readonly nowS: () => number,
    private readonly prefix = 'svcmaps:sess:',
    private readonly timeoutMs = 250,
  ) {}

  observe(sub: string, sid: string, rank: number, exp: number): Promise<{ sid: string; rank: number } | undefined> {
    const ttl = Math.max(60, exp - this.nowS() + 60);
    const args = ['1', this.prefix + sub, sid, String(rank), String(ttl)];
    return runScript(this.client, this.faults, SCRIPT_LUA, args, this.timeoutMs, (r) => {
      const [best, bestRank] = r as string[];
      return best ? { sid: best, rank: Number(bestRank) } : undefined;
    });
  }
}
