import Database from 'better-sqlite3';
import type { PlaceRow } from './schema.js';

export type IndexedPlace = PlaceRow & { id: number };

interface ScoringColumns {
  lat: Float64Array;
  lng: Float64Array;
  importance: Float32Array;
  country: string[];
  kind: string[];
  /** Each place's search names as stored ('|'-joined): one string per place, split for the few candidates ranked. */
  names: string[];
}
export type SegmentHit = { place_id: number; lat1: number; lng1: number; lat2: number; lng2: number };

const ROW_COLS =
  'id, cid, source, kind, name, name_en, name_ar, category, country, context_en, context_ar, street, housenumber, lat, lng, importance, phone, website, hours, photos, search_names';

/** The layout version a places.db was written with (SQLite `user_version`, set by the builder). */
export function placesFileVersion(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/** Read-only access to places.db: FTS candidate queries, rows by id, and bounding-box lookups for reverse geocoding. */
export class PlacesIndex {
  private readonly db: Database.Database;
  private readonly fts;
  private readonly byIdsStmt;
  private readonly byCidStmt;
  private readonly inBoxStmt;
  private readonly localitiesStmt;
  private readonly segsStmt;
  readonly generation: string;
  readonly count: number;
  private cols: ScoringColumns | undefined;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.fts = this.db.prepare<[string, number], { rowid: number }>(
      'SELECT rowid FROM places_fts WHERE places_fts MATCH ? LIMIT ?',
    );
    this.byIdsStmt = this.db.prepare<[string], IndexedPlace>(
      `SELECT ${ROW_COLS} FROM places WHERE id IN (SELECT value FROM json_each(?))`,
    );
    this.byCidStmt = this.db.prepare<[string], IndexedPlace>(`SELECT ${ROW_COLS} FROM places WHERE cid = ?`);
    // CROSS JOIN fixes the order: box lookup in the R*Tree first, then the rows it found.
    const inBox = (rtree: string) =>
      this.db.prepare<[number, number, number, number, string], IndexedPlace>(
        `SELECT ${ROW_COLS.split(', ')
          .map((c) => 'p.' + c)
          .join(', ')} FROM ${rtree} r CROSS JOIN places p ON p.id = r.id
         WHERE r.min_lat >= ? AND r.max_lat <= ? AND r.min_lng >= ? AND r.max_lng <= ? AND p.kind IN (SELECT value FROM json_each(?))`,
      );
    this.inBoxStmt = inBox('places_rtree');
    this.localitiesStmt = this.db.prepare<[number, number, number, number], { id: number }>(
      'SELECT id FROM localities_rtree WHERE min_lat >= ? AND max_lat <= ? AND min_lng >= ? AND max_lng <= ?',
    );
    this.segsStmt = this.db.prepare<[number, number, number, number], SegmentHit>(
      `SELECT s.place_id, s.lat1, s.lng1, s.lat2, s.lng2 FROM street_segments s WHERE s.id IN
         (SELECT id FROM segments_rtree WHERE max_lat >= ? AND min_lat <= ? AND max_lng >= ? AND min_lng <= ?)`,
    );
    const meta = this.db.prepare("SELECT COALESCE(MAX(imported_at), '') AS g FROM sources").get() as { g: string };
    this.generation = meta.g;
    this.count = (this.db.prepare('SELECT COUNT(*) AS n FROM places').get() as { n: number }).n;
  }

  /**
   * Scoring columns held in memory (by row id), so ranking a few hundred candidates touches no disk pages. Read on
   * first use: a connection that only serves details and photos (the HTTP thread, when searches run in places
   * threads) never pays their memory or their seconds of loading. Every places thread holds its own copy, so they
   * are kept lean: country codes and kinds interned (a few hundred distinct strings instead of one per place),
   * names one string per place.
   */
  private columns(): ScoringColumns {
    if (this.cols) return this.cols;
    const size = this.count + 1; // ids run from 1 to count
    const c: ScoringColumns = {
      lat: new Float64Array(size),
      lng: new Float64Array(size),
      importance: new Float32Array(size),
      country: new Array<string>(size).fill(''),
      kind: new Array<string>(size).fill(''),
      names: new Array<string>(size).fill(''),
    };
    const interned = new Map<string, string>();
    const intern = (s: string) => {
      let v = interned.get(s);
      if (v === undefined) interned.set(s, (v = s));
      return v;
    };
    const rows = this.db
      .prepare('SELECT id, lat, lng, importance, country, kind, search_names FROM places')
      .raw()
      .iterate() as Iterable<[number, number, number, number, string | null, string, string]>;
    for (const [id, lat, lng, imp, cc, kind, names] of rows) {
      c.kind[id] = intern(kind);
      c.lat[id] = lat;
      c.lng[id] = lng;
      c.importance[id] = imp;
      c.country[id] = intern(cc ?? '');
      c.names[id] = names;
    }
    return (this.cols = c);
  }

  /** Reads the scoring columns now (a places thread does, before it reports ready). */
  warm(): this {
    this.columns();
    return this;
  }

  get lat(): Float64Array {
    return this.columns().lat;
  }
  get lng(): Float64Array {
    return this.columns().lng;
  }
  get importance(): Float32Array {
    return this.columns().importance;
  }
  get country(): string[] {
    return this.columns().country;
  }
  get kind(): string[] {
    return this.columns().kind;
  }
  /** Place `id`'s search names. */
  names(id: number): string[] {
    return this.columns().names[id]!.split('|');
  }

  /** Row ids matching an FTS5 expression, most important first (rows were inserted in importance order). */
  match(expr: string, limit: number): number[] {
    return this.fts.all(expr, limit).map((r) => r.rowid);
  }

  byIds(ids: number[]): IndexedPlace[] {
    return ids.length ? this.byIdsStmt.all(JSON.stringify(ids)) : [];
  }

  byCid(cid: string): IndexedPlace | undefined {
    return this.byCidStmt.get(cid);
  }

  /** Points of the given kinds inside a box of `dLat` x `dLng` degrees around a point. */
  near(lat: number, lng: number, dLat: number, dLng: number, kinds: string[]): IndexedPlace[] {
    return this.inBoxStmt.all(lat - dLat, lat + dLat, lng - dLng, lng + dLng, JSON.stringify(kinds));
  }

  /** Ids of localities (city ... hamlet) in a box, from their own R*Tree; position and kind are in memory. */
  localitiesNear(lat: number, lng: number, dLat: number, dLng: number): number[] {
    return this.localitiesStmt.all(lat - dLat, lat + dLat, lng - dLng, lng + dLng).map((r) => r.id);
  }

  segmentsNear(lat: number, lng: number, dLat: number, dLng: number): SegmentHit[] {
    return this.segsStmt.all(lat - dLat, lat + dLat, lng - dLng, lng + dLng);
  }

  close(): void {
    this.db.close();
  }
}
