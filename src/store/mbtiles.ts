import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';

/**
 * One MBTiles 1.3 file: `metadata` (name/value) and `tiles` (zoom_level, tile_column, tile_row, tile_data) with the
 * TMS row flip (tile_row = 2^z - 1 - y), so any MBTiles reader serves it. Beside them, `svc_tile_meta` keeps a content
 * hash and the write time per tile (for refreshes and ETags) and `svc_seed_jobs` the seed jobs for `--resume`; other
 * readers ignore both. WAL lets a server read while a seeder writes; busy_timeout makes two writers wait, not fail.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS metadata (name TEXT NOT NULL, value TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS metadata_name ON metadata (name);
CREATE TABLE IF NOT EXISTS tiles (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, tile_data BLOB NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS tile_index ON tiles (zoom_level, tile_column, tile_row);
CREATE TABLE IF NOT EXISTS svc_tile_meta (
  zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, hash TEXT NOT NULL, updated_at INTEGER NOT NULL,
  PRIMARY KEY (zoom_level, tile_column, tile_row)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS svc_seed_jobs (id INTEGER PRIMARY KEY, args TEXT NOT NULL, started_at INTEGER NOT NULL, finished_at INTEGER);
`;

export interface StoredTile {
  data: Buffer;
  hash: string;
  /** Unix milliseconds of the last write. */
  updatedAt: number;
}

export interface TileWrite {
  z: number;
  x: number;
  y: number;
  data: Buffer;
}

export const tmsRow = (z: number, y: number): number => 2 ** z - 1 - y;
export const tileHash = (data: Buffer): string => createHash('sha1').update(data).digest('base64url').slice(0, 22);

export class MBTiles {
  private readonly db: Database.Database;
  private readonly sGet: Database.Statement;
  private readonly sHas: Database.Statement;
  private readonly sPut: Database.Statement;
  private readonly sPutMeta: Database.Statement;
  private readonly putBatch: (rows: TileWrite[], now: number) => void;

  constructor(
    readonly file: string,
    opts: { readonly?: boolean } = {},
  ) {
    const ro = opts.readonly ?? false;
    this.db = new Database(file, { readonly: ro, fileMustExist: ro });
    this.db.pragma('busy_timeout = 10000');
    if (!ro) {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(SCHEMA);
    }
    const hasMeta = ro
      ? Boolean(this.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'svc_tile_meta'`).get())
      : true;
    this.sGet = this.db.prepare(
      hasMeta
        ? `SELECT t.tile_data AS data, m.hash AS hash, m.updated_at AS updatedAt FROM tiles t LEFT JOIN svc_tile_meta m
           ON m.zoom_level = t.zoom_level AND m.tile_column = t.tile_column AND m.tile_row = t.tile_row
           WHERE t.zoom_level = ? AND t.tile_column = ? AND t.tile_row = ?`
        : `SELECT tile_data AS data, NULL AS hash, NULL AS updatedAt FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?`,
    );
    this.sHas = this.db.prepare(
      hasMeta
        ? `SELECT COALESCE(m.updated_at, 0) AS updatedAt FROM tiles t LEFT JOIN svc_tile_meta m
           ON m.zoom_level = t.zoom_level AND m.tile_column = t.tile_column AND m.tile_row = t.tile_row
           WHERE t.zoom_level = ? AND t.tile_column = ? AND t.tile_row = ?`
        : `SELECT 0 AS updatedAt FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?`,
    );
    this.sPut = ro
      ? this.sGet
      : this.db.prepare('INSERT OR REPLACE INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?,?,?,?)');
    this.sPutMeta = ro
      ? this.sGet
      : this.db.prepare(
          'INSERT OR REPLACE INTO svc_tile_meta (zoom_level, tile_column, tile_row, hash, updated_at) VALUES (?,?,?,?,?)',
        );
    this.putBatch = this.db.transaction((rows: TileWrite[], now: number) => {
      for (const r of rows) {
        const row = tmsRow(r.z, r.y);
        this.sPut.run(r.z, r.x, row, r.data);
        this.sPutMeta.run(r.z, r.x, row, tileHash(r.data), now);
      }
    });
  }

  get(z: number, x: number, y: number): StoredTile | undefined {
    const r = this.sGet.get(z, x, tmsRow(z, y)) as
      { data: Buffer; hash: string | null; updatedAt: number | null } | undefined;
    if (!r) return undefined;
    return { data: r.data, hash: r.hash ?? tileHash(r.data), updatedAt: r.updatedAt ?? 0 };
  }

  /** Write time of a stored tile (0 when the file has no side table), or undefined when absent. */
  updatedAt(z: number, x: number, y: number): number | undefined {
    const r = this.sHas.get(z, x, tmsRow(z, y)) as { updatedAt: number } | undefined;
    return r?.updatedAt;
  }

  /** Writes many tiles in one transaction (the seeder's and the server's batched writes). */
  putMany(rows: TileWrite[], now = Date.now()): void {
    if (rows.length) this.putBatch(rows, now);
  }

  metadata(): Record<string, string> {
    const rows = this.db.prepare('SELECT name, value FROM metadata').all() as Array<{
      name: string;
      value: string | null;
    }>;
    return Object.fromEntries(rows.map((r) => [r.name, r.value ?? '']));
  }

  setMetadata(values: Record<string, string | number>): void {
    const put = this.db.prepare('INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)');
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(values)) put.run(k, String(v));
    })();
  }

  /** Tile counts per zoom, for `tiles info` and seed summaries. */
  countsByZoom(): Array<{ z: number; tiles: number; bytes: number }> {
    return this.db
      .prepare(
        'SELECT zoom_level AS z, COUNT(*) AS tiles, SUM(LENGTH(tile_data)) AS bytes FROM tiles GROUP BY zoom_level ORDER BY zoom_level',
      )
      .all() as Array<{ z: number; tiles: number; bytes: number }>;
  }

  /** Average stored bytes per tile at a zoom, or undefined when nothing is stored there. */
  averageTileBytes(z: number): number | undefined {
    const r = this.db
      .prepare<[number], { avg: number | null }>('SELECT AVG(LENGTH(tile_data)) AS avg FROM tiles WHERE zoom_level = ?')
      .get(z);
    return r?.avg ?? undefined;
  }

  /** Lowest and highest zoom with stored tiles, or undefined for an empty file. */
  zoomRange(): { lo: number; hi: number } | undefined {
    const r = this.db
      .prepare<[], { lo: number | null; hi: number | null }>(
        'SELECT MIN(zoom_level) AS lo, MAX(zoom_level) AS hi FROM tiles',
      )
      .get();
    return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : undefined;
  }

  /** Records a seed job (its arguments as JSON text) and returns its id. */
  startSeedJob(args: string, now = Date.now()): number {
    const r = this.db.prepare('INSERT INTO svc_seed_jobs (args, started_at) VALUES (?, ?)').run(args, now);
    return Number(r.lastInsertRowid);
  }

  finishSeedJob(id: number, now = Date.now()): void {
    this.db.prepare('UPDATE svc_seed_jobs SET finished_at = ? WHERE id = ?').run(now, id);
  }

  /** The most recent seed job that never finished, if any. */
  unfinishedSeedJob(): { id: number; args: string; startedAt: number } | undefined {
    return this.db
      .prepare<[], { id: number; args: string; startedAt: number }>(
        'SELECT id, args, started_at AS startedAt FROM svc_seed_jobs WHERE finished_at IS NULL ORDER BY id DESC LIMIT 1',
      )
      .get();
  }

  /** SQLite's integrity check of the file: `ok`, or what it found. */
  integrityCheck(): string {
    return String(this.db.pragma('integrity_check', { simple: true }));
  }

  /** Every stored tile with its TMS row and stored hash (null when the file has no side table), in storage order. */
  *storedTiles(): Generator<{ z: number; x: number; row: number; data: Buffer; hash: string | null }> {
    const hasMeta = Boolean(this.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'svc_tile_meta'`).get());
    const rows = this.db.prepare<[], { z: number; x: number; row: number; data: Buffer; hash: string | null }>(
      hasMeta
        ? 'SELECT t.zoom_level z, t.tile_column x, t.tile_row row, t.tile_data data, m.hash hash FROM tiles t LEFT JOIN svc_tile_meta m USING (zoom_level, tile_column, tile_row)'
        : 'SELECT zoom_level z, tile_column x, tile_row row, tile_data data, NULL hash FROM tiles',
    );
    yield* rows.iterate();
  }

  /** Folds the write-ahead log into the file and leaves WAL mode: a standalone file, no -wal/-shm to forget. */
  makeStandalone(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.pragma('journal_mode = DELETE');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
