import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { createClient } from 'redis';
import type { Logger } from '../../core/log.js';

export type RedisClient = ReturnType<typeof createClient>;

/** The redis client library, loaded at the first connection (a single node never loads it; see postgres/pool.ts). */
const redisLib = () => createRequire(import.meta.url)('redis') as typeof import('redis');

/**
 * A Redis connection that never queues commands while disconnected (a caller sees the fault at once and fails
 * open) and reconnects by itself, so a Redis restart needs no node restart. A subscriber queues instead: its
 * SUBSCRIBE is sent when the connection comes up, and renewed after every reconnect.
 */
export function openRedis(url: string, log: Logger, name: string, queueWhileOffline = false): RedisClient {
  const client = redisLib().createClient({
    url,
    disableOfflineQueue: !queueWhileOffline,
    socket: { connectTimeout: 1000, reconnectStrategy: (retries: number) => Math.min(50 + retries * 100, 1000) },
  });
  let down = false;
  client.on('error', (e: Error) => {
    if (!down) log.warn('redis unreachable; limits fail open until it returns', { client: name, error: e.message });
    down = true;
  });
  client.on('ready', () => {
    if (down) log.info('redis reachable again', { client: name });
    down = false;
  });
  return client;
}

/** 'ok', or why Redis is not usable now. */
export function redisState(client: RedisClient): string {
  return client.isReady ? 'ok' : 'unreachable';
}

/** A Lua script and its SHA-1, so calls send the hash and the script text only when Redis does not know it yet. */
export interface LuaScript {
  text: string;
  sha: string;
}

export const luaScript = (text: string): LuaScript => ({ text, sha: createHash('sha1').update(text).digest('hex') });

/**
 * Runs a script and parses its reply, or resolves undefined when Redis is down, fails or has not answered within
 * timeoutMs: callers on the request path fail open and never wait on a slow Redis.
 */
export function runScript<T>(
  client: RedisClient,
  script: LuaScript,
  args: string[],
  timeoutMs: number,
  parse: (reply: unknown) => T,
): Promise<T | undefined> {
  if (!client.isReady) return Promise.resolve(undefined);
  const run = client
    .sendCommand(['EVALSHA', script.sha, ...args])
    .catch((e: Error) => {
      if (!e.message.startsWith('NOSCRIPT')) throw e;
      return client.sendCommand(['EVAL', script.text, ...args]);
    })
    .then(parse)
    .catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  return Promise.race([run, late]).finally(() => clearTimeout(timer));
}
