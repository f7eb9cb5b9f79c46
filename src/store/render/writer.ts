import { renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { MapFeature } from '../../render/features.js';
import { encodeRings } from './rings-blob.js';
import { RENDER_SCHEMA } from './schema.js';

/**
 * Write side of render.db: builds a complete file under a temporary name and renames it over the live one, so a
 * crash or Ctrl-C mid-import leaves the previous import in service and a server never sees a half-built index.
 */
export class RenderStoreWriter {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly insertBox: Database.Statement;
  private pending: Array<Omit<MapFeature, 'id'>> = [];
  private nextId = 1;
  readonly counts: Record<string, number> = {};

  constructor(
    private readonly finalPath: string,
    private readonly tmpPath = `${finalPath}.tmp-${process.pid}`,
  ) {
    rmSync(tmpPath, { force: true });
    this.db = new Database(tmpPath);
    this.db.pragma('journal_mode = OFF'); // a temp file: durability comes from the final rename, not the journal
    this.db.pragma('synchronous = OFF');
    this.db.exec(RENDER_SCHEMA);
    this.insert = this.db.prepare(
      'INSERT INTO features (id, layer, cls, minzoom, rank, name, name_en, name_ar, geom) VALUES (?,?,?,?,?,?,?,?,?)',
    );
    this.insertBox = this.db.prepare(
      'INSERT INTO features_rtree (id, minx, maxx, miny, maxy, minz, maxz) VALUES (?,?,?,?,?,?,?)',
    );
  }

  add(f: Omit<MapFeature, 'id'>): void {
    this.pending.push(f);
    this.counts[f.layer] = (this.counts[f.layer] ?? 0) + 1;
    if (this.pending.length >= 5000) this.flush();
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const f of batch) {
        const id = this.nextId++;
        this.insert.run(
          id,
          f.layer,
          f.cls,
          f.minzoom,
          f.rank,
          f.name ?? null,
          f.nameEn ?? null,
          f.nameAr ?? null,
          encodeRings(f.rings),
        );
        this.insertBox.run(id, f.box[0], f.box[2], f.box[1], f.box[3], f.minzoom, f.minzoom);
      }
    })();
  }

  /** Writes the meta rows, closes and renames into place. */
  commit(meta: Record<string, string>): void {
    this.flush();
    const put = this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    for (const [k, v] of Object.entries(meta)) put.run(k, v);
    this.db.exec('ANALYZE');
    this.db.close();
    renameSync(this.tmpPath, this.finalPath);
  }

  abort(): void {
    if (this.db.open) this.db.close();
    rmSync(this.tmpPath, { force: true });
  }
}
