import type { UsageStore } from '../../limits/ports.js';
import type { Bucket, UsageDelta } from '../usage-repo.js';
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
}
