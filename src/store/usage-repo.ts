import type { Db } from './db.js';

export type Bucket = 'gather' | 'tiles' | 'tile_family';

export interface UsageDelta {
  keyId: string;
  day: string;
  bucket: Bucket;
  requests: number;
  misses: number;
  lastSeen: number;
}

export interface UsageRow {
  key_id: string;
  day: string;
  bucket: Bucket;
  requests: number;
  misses: number;
  last_seen: number;
}

/** Per-key, per-day metering counters. Writes arrive in batches from the meter, never one per request. */
export class UsageRepo {
  private readonly upsert;
  private readonly missesStmt;
  private readonly dayStmt;
  private readonly applyAll;
  private readonly lastSeenStmt;

  constructor(db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO usage (key_id, day, bucket, requests, misses, last_seen) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, bucket) DO UPDATE SET
         requests = requests + excluded.requests,
         misses = misses + excluded.misses,
         last_seen = MAX(last_seen, excluded.last_seen)`,
    );
    this.missesStmt = db.prepare<[string, string, string], { misses: number }>(
      'SELECT misses FROM usage WHERE key_id = ? AND day = ? AND bucket = ?',
    );
    this.dayStmt = db.prepare<[string], UsageRow>('SELECT * FROM usage WHERE day = ? ORDER BY key_id, bucket');
    this.lastSeenStmt = db.prepare<[], { key_id: string; last_seen: number }>(
      'SELECT key_id, MAX(last_seen) AS last_seen FROM usage GROUP BY key_id',
    );
    this.applyAll = db.transaction((deltas: UsageDelta[]) => {
      for (const d of deltas) this.upsert.run(d.keyId, d.day, d.bucket, d.requests, d.misses, d.lastSeen);
    });
  }

  apply(deltas: UsageDelta[]): void {
    if (deltas.length) this.applyAll.immediate(deltas);
  }

  misses(keyId: string, day: string, bucket: Bucket): number {
    return this.missesStmt.get(keyId, day, bucket)?.misses ?? 0;
  }

  forDay(day: string): UsageRow[] {
    return this.dayStmt.all(day);
  }

  /** Last request time (Unix seconds) per key over all recorded days, for `svcmaps quotas`. */
  lastSeenByKey(): Map<string, number> {
    return new Map(this.lastSeenStmt.all().map((r) => [r.key_id, r.last_seen]));
  }
}
