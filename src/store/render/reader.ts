import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Layer, MapFeature } from '../../render/features.js';
import type { Box } from '../../render/mercator.js';
import { decodeRings } from './rings-blob.js';
import { RENDER_DB } from './schema.js';

interface Row {
  id: number;
  layer: Layer;
  cls: string;
  minzoom: number;
  rank: number;
  name: string | null;
  name_en: string | null;
  name_ar: string | null;
  geom: Buffer;
  minx: number;
  maxx: number;
  miny: number;
  maxy: number;
}

/**
 * Read side of render.db (imported OSM features with an R*Tree). Reopens itself when an import swaps the file, so a
 * running server picks up a new import without a restart.
 */
export class RenderStore {
  private db: Database.Database | undefined;
  private stmt: Database.Statement | undefined;
  private labelStmt: Database.Statement | undefined;
  private mtime = 0;
  private checkedAt = 0;
  /** Area covered by the import (normalised), where OSM coastline and water replace Natural Earth. */
  coverage: Box | undefined;

  constructor(readonly file: string) {}

  static inDataDir(dir: string): RenderStore {
    return new RenderStore(join(dir, RENDER_DB));
  }

  private open(): boolean {
    const now = Date.now();
    if (this.db && now - this.checkedAt < 2000) return true;
    this.checkedAt = now;
    if (!existsSync(this.file)) return (this.close(), false);
    const m = statSync(this.file).mtimeMs;
    if (this.db && m === this.mtime) return true;
    this.close();
    this.db = new Database(this.file, { readonly: true, fileMustExist: true });
    this.mtime = m;
    this.stmt = this.db.prepare(
      `SELECT f.*, r.minx, r.maxx, r.miny, r.maxy FROM features_rtree r JOIN features f ON f.id = r.id
       WHERE r.maxx >= ? AND r.minx <= ? AND r.maxy >= ? AND r.miny <= ? AND r.minz <= ?`,
    );
    this.labelStmt = this.db.prepare(
      `SELECT f.*, r.minx, r.maxx, r.miny, r.maxy FROM features_rtree r JOIN features f ON f.id = r.id
       WHERE r.maxx >= ? AND r.minx <= ? AND r.maxy >= ? AND r.miny <= ? AND r.minz <= ?
       AND f.layer IN ('place', 'poi', 'road') AND (f.name IS NOT NULL OR f.name_en IS NOT NULL OR f.name_ar IS NOT NULL)`,
    );
    const cov = this.db.prepare(`SELECT value FROM meta WHERE key = 'coverage'`).get() as { value: string } | undefined;
    this.coverage = cov ? (JSON.parse(cov.value) as Box) : undefined;
    return true;
  }

  get available(): boolean {
    return this.open();
  }

  /** Features in `box` visible at `zoom`; `labelsOnly` returns just named places, POIs and roads. */
  query(box: Box, zoom: number, labelsOnly = false): MapFeature[] {
    if (!this.open()) return [];
    const rows = (labelsOnly ? this.labelStmt! : this.stmt!).all(box[0], box[2], box[1], box[3], zoom) as Row[];
    return rows.map((r) => ({
      id: r.id,
      layer: r.layer,
      cls: r.cls,
      minzoom: r.minzoom,
      rank: r.rank,
      name: r.name ?? undefined,
      nameEn: r.name_en ?? undefined,
      nameAr: r.name_ar ?? undefined,
      rings: decodeRings(r.geom),
      box: [r.minx, r.miny, r.maxx, r.maxy],
    }));
  }

  meta(): Record<string, string> {
    if (!this.open()) return {};
    const rows = this.db!.prepare('SELECT key, value FROM meta').all() as Array<{ key: string; value: string }>;
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
    this.stmt = undefined;
    this.labelStmt = undefined;
    this.coverage = undefined;
  }
}
