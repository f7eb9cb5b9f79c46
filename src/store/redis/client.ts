import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { createClient } from 'redis';
import { repeatingLog, type Logger } from '../../core/log.js';

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

/** A Lua script (named for the log), and its SHA-1: calls send the hash, and the text only when Redis lacks it. */
export interface LuaScript {
  name: string;
  text: string;
  sha: string;
}

export const luaScript = (name: string, text: string): LuaScript => ({
  name,
  text,
  sha: createHash('sha1').update(text).digest('hex'),
});

/**
 * Why a Redis command failed. `command`: Redis (or the reply's parser) refused it: an error reply such as ERR (a
 * Lua runtime error), NOSCRIPT or WRONGTYPE, or a reply of the wrong shape; a bug to fix, not an outage.
 * `connection`: Redis is out of reach (no connection, socket closed or timed out) or answers that it cannot serve
 * now (loading its data set, busy with a slow script, a read-only replica).
 */
export type RedisFaultKind = 'command' | 'connection';

/** Error replies that say Redis cannot serve now rather than that the command is wrong. */
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

export function redisFaultKind(e: unknown): RedisFaultKind {
  if (!(e instanceof Error)) return 'command';
  // node-redis's ErrorReply; ReplyError is the name other Redis clients give the same thing
  const reply = e instanceof redisLib().ErrorReply || e.name === 'ReplyError' || e.name === 'ErrorReply';
  if (reply) return UNAVAILABLE_REPLY.test(e.message) ? 'connection' : 'command';
  const lib = redisLib();
  const unreachable =
    e instanceof lib.ClientClosedError ||
    e instanceof lib.ClientOfflineError ||
    e instanceof lib.ConnectionTimeoutError ||
    e instanceof lib.SocketClosedUnexpectedlyError ||
    e instanceof lib.SocketTimeoutError ||
    e instanceof lib.ReconnectStrategyError ||
    typeof (e as NodeJS.ErrnoException).code === 'string'; // ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT ...
  return unreachable ? 'connection' : 'command';
}

/** Failed Redis commands of this process by kind, since it started (every client's; metrics read them). */
export const redisFaultCounts: Record<RedisFaultKind, number> = { command: 0, connection: 0 };

/**
 * Where the Redis stores report a failed command. Both kinds are counted; a command error is logged at error level
 * (at most one line per 10 s while it repeats, with the number not written) since it fails on every call until the
 * code is fixed, and limits fail open meanwhile. Redis being out of reach is logged by the client when the connection
 * drops and comes back (openRedis), so each failed command is a debug line only.
 */
export class RedisFaults {
  private readonly commandError: (fields: Record<string, unknown>) => void;

  constructor(private readonly log: Logger) {
    this.commandError = repeatingLog(log, 'error', 'redis command failed: a script or command error; limits fail open');
  }

  record(e: unknown, what: string): RedisFaultKind {
    const kind = redisFaultKind(e);
    redisFaultCounts[kind]++;
    const error = (e as Error)?.message ?? String(e);
    if (kind === 'command') this.commandError({ command: what, error });
    else this.log.debug('redis command not answered: redis unreachable or not serving', { command: what, error });
    return kind;
  }
}

/**
 * Runs a script and parses its reply, or resolves undefined when Redis is down, fails or has not answered within
 * timeoutMs: callers on the request path fail open and never wait on a slow Redis. A failure is reported to
 * `faults`, which tells a script or command error from Redis being out of reach.
 */
export function runScript<T>(
  client: RedisClient,
  faults: RedisFaults,
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
    .catch((e: unknown) => void faults.record(e, `script ${script.name}`));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  return Promise.race([run, late]).finally(() => clearTimeout(timer));
}
