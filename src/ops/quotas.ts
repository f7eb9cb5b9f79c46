import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { utcDay } from '../core/clock.js';
import { keyState } from '../auth/api-keys.js';
import { openDb } from '../store/db.js';
import { STORE_FILE } from '../store/data-dir.js';
import { KeysRepo, type KeyRow } from '../store/keys-repo.js';
import { UsageRepo, type Bucket, type UsageRow } from '../store/usage-repo.js';

interface BucketUse {
  requests: number;
  misses: number;
}

/** One key's standing today (UTC). Daily quotas count misses per bucket: `gather` (JSON) and `tiles` (staticmap). */
interface QuotaRow {
  id: string;
  name: string;
  plan: string;
  state: string;
  per_minute: number;
  daily: number;
  buckets: Record<Bucket, BucketUse>;
  /** Requests today over every bucket (what a per-minute rate is derived from between two samples). */
  requests: number;
  /** The fuller of the two quota'd buckets, as a share of the daily quota. */
  used: number;
  last_seen: string | null;
}

export interface QuotaSnapshot {
  day: string;
  at: number;
  keys: QuotaRow[];
}

/**
 * Reads keys and today's usage straight from the store (WAL: safe while a server writes; the meter flushes every
 * second, so figures trail the server by about that much).
 */
export function readQuotas(dataDir: string, nowMs = Date.now(), keyId?: string): QuotaSnapshot {
  const day = utcDay(nowMs);
  const file = join(dataDir, STORE_FILE);
  if (!existsSync(file)) return { day, at: nowMs, keys: [] };
  const db = openDb(file, { readonly: true });
  try {
    const usage = new UsageRepo(db);
    return quotaSnapshot(nowMs, new KeysRepo(db).list(), usage.forDay(day), usage.lastSeenByKey(), keyId);
  } finally {
    db.close();
  }
}

/** The snapshot from rows of any store: keys, today's usage rows and each key's last request time. */
export function quotaSnapshot(
  nowMs: number,
  allKeys: KeyRow[],
  today: UsageRow[],
  last: Map<string, number>,
  keyId?: string,
): QuotaSnapshot {
  const day = utcDay(nowMs);
  const keys = allKeys.filter((k) => !keyId || k.id === keyId);
  return {
    day,
    at: nowMs,
    keys: keys.map((k) => {
      const buckets: Record<Bucket, BucketUse> = {
        gather: { requests: 0, misses: 0 },
        tiles: { requests: 0, misses: 0 },
        tile_family: { requests: 0, misses: 0 },
      };
      for (const u of today) if (u.key_id === k.id) buckets[u.bucket] = { requests: u.requests, misses: u.misses };
      const seen = last.get(k.id);
      return {
        id: k.id,
        name: k.name,
        plan: k.plan,
        state: keyState(k, Math.floor(nowMs / 1000)),
        per_minute: k.per_minute,
        daily: k.daily,
        buckets,
        requests: buckets.gather.requests + buckets.tiles.requests + buckets.tile_family.requests,
        used: Math.max(buckets.gather.misses, buckets.tiles.misses) / k.daily,
        last_seen: seen ? new Date(seen * 1000).toISOString() : null,
      };
    }),
  };
}

/** Requests per minute per key between two snapshots of the same day. */
export function ratesBetween(prev: QuotaSnapshot | undefined, cur: QuotaSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  if (!prev || prev.day !== cur.day || cur.at <= prev.at) return out;
  const before = new Map(prev.keys.map((k) => [k.id, k.requests]));
  for (const k of cur.keys) out.set(k.id, ((k.requests - (before.get(k.id) ?? 0)) * 60_000) / (cur.at - prev.at));
  return out;
}

/** "12,345 / 50,000 (24.7%)" style cells shared by the plain table and the live view. */
const quotaCell = (misses: number, daily: number) =>
  `${misses.toLocaleString('en-US')}/${daily.toLocaleString('en-US')}`;
const pct = (f: number) => (f === 0 ? '0%' : f < 0.001 ? '<0.1%' : `${(f * 100).toFixed(f >= 0.1 ? 0 : 1)}%`);
function ago(iso: string | null, nowMs: number): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  return s < 60
    ? `${s}s ago`
    : s < 3600
      ? `${Math.floor(s / 60)}m ago`
      : s < 86400
        ? `${Math.floor(s / 3600)}h ago`
        : `${Math.floor(s / 86400)}d ago`;
}

/**
 * The table: GATHER and TILES are misses today against the daily quota (the two quota'd buckets), TILE REQS the tile
 * family's requests (metered, not quota'd), REQ/MIN the observed rate over the per-minute limit ("-" until a second
 * sample exists, i.e. outside the live view).
 */
export function quotaTable(s: QuotaSnapshot, rates?: Map<string, number>): string[][] {
  const head = ['KEY', 'NAME', 'PLAN', 'STATE', 'GATHER', 'TILES', 'USED', 'TILE REQS', 'REQ/MIN', 'LAST SEEN'];
  const rows = s.keys.map((k) => [
    k.id,
    k.name || '-',
    k.plan,
    k.state,
    quotaCell(k.buckets.gather.misses, k.daily),
    quotaCell(k.buckets.tiles.misses, k.daily),
    pct(k.used),
    k.buckets.tile_family.requests.toLocaleString('en-US'),
    `${rates ? Math.round(rates.get(k.id) ?? 0) : '-'}/${k.per_minute}`,
    ago(k.last_seen, s.at),
  ]);
  return [head, ...rows];
}

export function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
