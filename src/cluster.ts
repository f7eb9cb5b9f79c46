import type { ClusterConfig } from './config/defaults.js';
import type { Logger } from './core/log.js';
import { utcDay } from './core/clock.js';
import { quotaSnapshot, type QuotaSnapshot } from './ops/quotas.js';
import type { KeyRow } from './store/keys-repo.js';
import type { UsageRow } from './store/usage-repo.js';
import { migratePg, openPgPool, type PgPool } from './store/postgres/pool.js';
import { PgKeyStore } from './store/postgres/keys.js';
import { PgUsageStore } from './store/postgres/usage.js';
import { sharedTileSecret } from './store/postgres/settings.js';
import { PgSessions } from './store/postgres/sessions.js';
import { openRedis, RedisFaults, redisState, type RedisClient } from './store/redis/client.js';
import { RedisSlidingWindow } from './store/redis/limiter.js';
import { RedisDailyQuota } from './store/redis/quota.js';
import { RedisKeyEvents } from './store/redis/bus.js';
import { RedisSessions } from './store/redis/sessions.js';

/** The shared state of a node in a cluster: the adapters app.ts wires in place of the SQLite ones. */
export interface Cluster {
  keys: PgKeyStore;
  usage: PgUsageStore;
  /** Absent without Redis: per-minute limits then count per node. */
  limiter?: RedisSlidingWindow;
  /** Absent without Redis: daily quotas then follow PostgreSQL's totals (each node learns the others' at a flush). */
  quota?: RedisDailyQuota;
  events?: RedisKeyEvents;
  /** JWT session supersede: Redis first, PostgreSQL (the durable record) when Redis cannot answer or is absent. */
  sessions: PgSessions;
  /**
   * Migrates PostgreSQL, loads the key mirror, connects Redis and listens for key changes. A server starts with
   * PostgreSQL down (key checks fail closed until a poll gets through); `requirePostgres` (the CLI) throws instead.
   */
  start(onKeyChanged: (id: string) => void, opts?: { requirePostgres?: boolean }): Promise<void>;
  health(): { postgres: string; redis: string };
  /**
   * The tile-token secret every node shares: cluster.tile_token_secret, or the one kept in PostgreSQL (read with the
   * first key load). Undefined until read, or when refused: tile tokens then fail closed, never a per-node secret.
   */
  tileSecret(): Buffer | undefined;
  /** Keys and today's usage of every node (GET /admin/usage, `svcmaps quotas`). */
  quotas(nowMs: number, keyId?: string): Promise<QuotaSnapshot>;
  /** `svcmaps cluster migrate`: a single node's keys and usage rows into PostgreSQL; counts of rows written. */
  importFrom(keyRows: KeyRow[], usageRows: UsageRow[]): Promise<{ keys: number; usage: number }>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  /**
   * Set by whatever mints or verifies tile tokens (a server; `cluster migrate`, to carry a single node's secret over):
   * the shared secret is then read from PostgreSQL, and `offer` (this node's tile-token.secret) written there first
   * if the cluster has none yet. Without it nothing is read or written (`keys`, `quotas`).
   */
  tileTokens?: { offer: Buffer | undefined };
}

/** Undefined when no cluster is configured: the node keeps everything in its own SQLite store. */
export function openCluster(
  c: ClusterConfig,
  log: Logger,
  nowS: () => number,
  o: ClusterOptions = {},
): Cluster | undefined {
  if (!c.postgres_url) {
    if (c.redis_url) throw new Error('cluster.redis_url needs cluster.postgres_url (keys and usage live there)');
    if (c.tile_token_secret) throw new Error('cluster.tile_token_secret needs cluster.postgres_url');
    return undefined;
  }
  const pool: PgPool = openPgPool(c.postgres_url, c.pool_size, log);
  let pgDownAtStart = false;
  // An operator's secret is used as it is; otherwise the one in PostgreSQL, read before the first key load below.
  let tileSecret: Buffer | undefined = c.tile_token_secret ? Buffer.from(c.tile_token_secret, 'hex') : undefined;
  // Migrating is the first step of the key mirror's first load, so a node whose PostgreSQL is down at start retries
  // it at every poll: the node starts, answers key checks 503 until then, and needs no restart when it comes back.
  const prepare = async (): Promise<void> => {
    await migratePg(pool);
    if (o.tileTokens && !tileSecret) {
      const r = await sharedTileSecret(pool, o.tileTokens.offer);
      if (r.ok) tileSecret = r.secret;
      else log.error('shared tile-token secret refused; tile tokens are disabled (fail closed)', { reason: r.reason });
    }
    if (pgDownAtStart) log.info('postgres reachable; key checks answer again');
  };
  const keys = new PgKeyStore(pool, c.poll_ms, undefined, prepare);
  const usage = new PgUsageStore(pool);
  let pub: RedisClient | undefined;
  let sub: RedisClient | undefined;
  if (c.redis_url) {
    pub = openRedis(c.redis_url, log, 'commands');
    sub = openRedis(c.redis_url, log, 'subscriber', true);
  }
  const faults = new RedisFaults(log);
  const limiter = pub && new RedisSlidingWindow(pub, faults);
  const quota = pub && new RedisDailyQuota(pub, faults);
  const events = pub && sub && new RedisKeyEvents(pub, sub, faults);
  const sessions = new PgSessions(
    pool,
    pub && new RedisSessions(pub, faults, nowS),
    () => keys.state() === 'ok',
    nowS,
    log,
  );
  let started = false;
  return {
    keys,
    usage,
    limiter,
    quota,
    events,
    sessions,
    async start(onKeyChanged, opts = {}) {
      if (started) return;
      started = true;
      await keys.start();
      if (keys.state() !== 'ok') {
        if (opts.requirePostgres) throw new Error(`PostgreSQL unavailable: ${keys.state()}`);
        pgDownAtStart = true;
        log.warn('postgres unreachable at start; key checks answer 503 MAPS_AUTH_UNAVAILABLE until it is reachable', {
          error: keys.state(),
        });
      }
      if (pub && sub && events) {
        // A Redis that is down at start is not fatal: limits fail open and the clients connect in the background.
        const connecting = Promise.all([pub.connect(), sub.connect()]).catch((e: Error) =>
          log.warn('redis connection failed', { error: e.message }),
        );
        const listening = events
          .listen((id) => {
            onKeyChanged(id);
            void keys.sync();
          })
          .catch((e: Error) => log.warn('redis subscribe failed', { error: e.message }));
        await Promise.race([Promise.all([connecting, listening]), new Promise((r) => setTimeout(r, 2000).unref())]);
      }
      log.info('cluster store ready', { postgres: keys.state(), redis: pub ? redisState(pub) : 'not configured' });
    },
    async quotas(nowMs, keyId) {
      const [all, today, last] = await Promise.all([keys.list(), usage.forDay(utcDay(nowMs)), usage.lastSeenByKey()]);
      return quotaSnapshot(nowMs, all, today, last, keyId);
    },
    async importFrom(keyRows, usageRows) {
      const added = await keys.importRows(keyRows);
      const rows = await usage.importRows(usageRows);
      await keys.sync();
      return { keys: added, usage: rows };
    },
    health() {
      return { postgres: keys.state(), redis: pub ? redisState(pub) : 'ok' };
    },
    tileSecret: () => tileSecret,
    async close() {
      keys.stop();
      for (const client of [pub, sub]) if (client?.isOpen) client.destroy();
      await pool.end().catch((e: unknown) => log.warn('postgres pool did not close', { error: (e as Error).message }));
    },
  };
}
