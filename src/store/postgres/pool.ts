import { createRequire } from 'node:module';
import type pg from 'pg';
import type { Logger } from '../../core/log.js';
import { PG_MIGRATIONS } from './migrations.js';

export type PgPool = pg.Pool;

let loaded: typeof pg | undefined;
/**
 * The pg client, loaded when a cluster first opens a pool rather than with this module: the app imports the
 * cluster code, and a single node (the default) should not spend its start-up loading a client it never uses.
 */
function pgClient(): typeof pg {
  if (loaded) return loaded;
  const m = createRequire(import.meta.url)('pg') as typeof pg;
  // BIGINT columns hold Unix seconds and counters, all far below 2^53: read them as numbers.
  m.types.setTypeParser(m.types.builtins.INT8, (v) => Number(v));
  return (loaded = m);
}

/** A pooled connection to the cluster's PostgreSQL; queries give up after a few seconds instead of hanging. */
export function openPgPool(url: string, size: number, log: Logger): PgPool {
  const pool = new (pgClient().Pool)({
    connectionString: url,
    max: size,
    connectionTimeoutMillis: 2000,
    query_timeout: 3000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server (PostgreSQL restarting) must not crash the process; the next query reconnects.
  pool.on('error', (e: Error) => log.warn('postgres connection lost; the next query reconnects', { error: e.message }));
  return pool;
}

/** Applies pending migrations under an advisory lock, so nodes starting together migrate once. */
export async function migratePg(pool: PgPool): Promise<number> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SELECT pg_advisory_xact_lock(72616601)');
    await c.query('CREATE TABLE IF NOT EXISTS svcmaps_schema (version INTEGER NOT NULL)');
    const r = await c.query<{ version: number }>('SELECT version FROM svcmaps_schema');
    let v = r.rows[0]?.version ?? 0;
    if (r.rows.length === 0) await c.query('INSERT INTO svcmaps_schema (version) VALUES (0)');
    for (; v < PG_MIGRATIONS.length; v++) await c.query(PG_MIGRATIONS[v]!);
    await c.query('UPDATE svcmaps_schema SET version = $1', [v]);
    await c.query('COMMIT');
    return v;
  } catch (e) {
    // A ROLLBACK that fails too (the connection broke) is told alongside the failure that needed it.
    await c.query('ROLLBACK').catch((rollback: unknown) => {
      throw new Error(`${(e as Error).message}; ROLLBACK failed too: ${(rollback as Error).message}`, { cause: e });
    });
    throw e;
  } finally {
    c.release();
  }
}
