import type { UsageStore } from '../../limits/ports.js';
import type { Bucket, UsageDelta, UsageRow } from '../usage-repo.js';
import type { PgPool } from './pool.js';

/**
 * Daily usage in PostgreSQL, written in batches by the meter (one statement per flush). Each write returns the
 * cluster-wide totals of the rows it touched, which answer quota reads without a round trip.
 */
export class PgUsageStore implements UsageStore {
  private readonly totals = new Map<string, number>();

  constructor(private readonly pool: PgPool) {}

  async apply(deltas: UsageDelta[]): Promise<void> {
    if (!deltas.length) return;
    const r = await this.pool.query<{ key_id: string; day: string; bucket: string; misses: number }>(
      `INSERT INTO usage (key_id, day, bucket, requests, misses, last_seen)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
       ON CONFLICT (key_id, day, bucket) DO UPDATE SET
         requests = usage.requests + excluded.requests,
         misses = usage.misses + excluded.misses,
         last_seen = GREATEST(usage.last_seen, excluded.last_seen)
       RETURNING key_id, day, bucket, misses`,
      [
        deltas.map((d) => d.keyId),
        deltas.map((d) => d.day),
        deltas.map((d) => d.bucket),
        deltas.map((d) => d.requests),
        deltas.map((d) => d.misses),
        deltas.map((d) => d.lastSeen),
      ],
    );
    if (this.totals.size > 100_000) this.totals.clear();
    for (const row of r.rows) this.totals.set(`${row.key_id}|${row.day}|${row.bucket}`, row.misses);
  }

  misses(keyId: string, day: string, bucket: Bucket): number {
    return this.totals.get(`${keyId}|${day}|${bucket}`) ?? 0;
  }

  /**
   * Copies usage rows from a single node's store. Counts merge by maximum, so running the copy twice does not count
   * a day twice (the copy is meant for the moment a node joins, before it meters into PostgreSQL).
   */
  async importRows(rows: UsageRow[]): Promise<number> {
    if (!rows.length) return 0;
    const r = await this.pool.query(
      `INSERT INTO usage (key_id, day, bucket, requests, misses, last_seen)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
       ON CONFLICT (key_id, day, bucket) DO UPDATE SET
         requests = GREATEST(usage.requests, excluded.requests),
         misses = GREATEST(usage.misses, excluded.misses),
         last_seen = GREATEST(usage.last_seen, excluded.last_seen)`,
      [
        rows.map((u) => u.key_id),
        rows.map((u) => u.day),
        rows.map((u) => u.bucket),
        rows.map((u) => u.requests),
        rows.map((u) => u.misses),
        rows.map((u) => u.last_seen),
      ],
    );
    return r.rowCount ?? 0;
  }

  async forDay(day: string): Promise<UsageRow[]> {
    const r = await this.pool.query<UsageRow>('SELECT * FROM usage WHERE day = $1 ORDER BY key_id, bucket', [day]);
    return r.rows;
  }

  /** Last request time (Unix seconds) per key over all recorded days. */
  async lastSeenByKey(): Promise<Map<string, number>> {
    const r = await this.pool.query<{ key_id: string; last_seen: number }>(
      'SELECT key_id, MAX(last_seen) AS last_seen FROM usage GROUP BY key_id',
    );
    return new Map(r.rows.map((row) => [row.key_id, row.last_seen]));
  }
}
