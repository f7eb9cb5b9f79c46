import Database from 'better-sqlite3';
import { columnsFileOf, readColumnsFile, writeColumnsFile } from './columns-file.js';
import type { PlaceRow } from './schema.js';

/**
 * The version of every place's near tokens a places index holds (schema.ts nearTokens, NEAR_TOKENS_VERSION), 0 when
 * it has none; files written before them have no places_meta.
 */
export function nearTokensVersion(db: Database.Database): number {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'places_meta'").get()) return 0;
  const row = db.prepare("SELECT value FROM places_meta WHERE key = 'near_tokens'").get() as
    { value: string } | undefined;
  return row ? Number(row.value) || 0 : 0;
}

export type IndexedPlace = PlaceRow & { id: number };

/**
 * The scoring columns, by row id, in SharedArrayBuffers: one places thread reads them from places.db and the others
 * map the same memory (see places-worker.ts). Country codes and kinds are codes into small tables; each place's
 * search names are its stored '|'-joined text as UTF-8, decoded only for the few candidates a search ranks.
 */
export interface ScoringColumns {
  /** The places.db they were read from (its import generation) and its row count + 1 (ids run from 1). */
  generation: string;
  size: number;
  lat: Float64Array;
  lng: Float64Array;
  importance: Float32Array;
  country: Uint16Array;
  countries: string[];
  kind: Uint16Array;
  kinds: string[];
  /** Place id's names are nameBytes[nameAt[id] .. nameAt[id + 1]). */
  nameAt: Uint32Array;
  nameBytes: Uint8Array;
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
  private readonly vocabStmt;
  private readonly byIdsStmt;
  private readonly byCidStmt;
  private readonly inBoxStmt;
  private readonly localitiesStmt;
  private readonly segsStmt;
  readonly generation: string;
  readonly count: number;
  /** Whether every place's near tokens are indexed (schema.ts nearTokens; files written before them are not). */
  readonly nearTokens: boolean;
  /** Whether they include two-character words' (NEAR_TOKENS_VERSION 2). */
  readonly nearShortWords: boolean;
  private cols: ScoringColumns | undefined;
  /** Where the scoring columns came from once read: the columns file beside places.db, or a pass over its rows. */
  columnsFrom: 'file' | 'places.db' | undefined;
  /** Why the columns file was not used or not written, when it was not (the caller logs it). */
  columnsNote: string | undefined;

  constructor(private readonly file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.fts = this.db.prepare<[string, number], { rowid: number }>(
      'SELECT rowid FROM places_fts WHERE places_fts MATCH ? LIMIT ?',
    );
    // The index's terms, for prefixes longer than its prefix indexes (prefixTerms). A TEMP table: the file stays
    // read-only.
    this.db.exec("CREATE VIRTUAL TABLE temp.places_vocab USING fts5vocab(main, places_fts, 'row')");
    this.vocabStmt = this.db.prepare<[string, string, number], { term: string }>(
      'SELECT term FROM temp.places_vocab WHERE term >= ? AND term < ? LIMIT ?',
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
    const near = nearTokensVersion(this.db);
    this.nearTokens = near > 0;
    this.nearShortWords = near >= 2;
    const meta = this.db.prepare("SELECT COALESCE(MAX(imported_at), '') AS g FROM sources").get() as { g: string };
    this.generation = meta.g;
    this.count = (this.db.prepare('SELECT COUNT(*) AS n FROM places').get() as { n: number }).n;
  }

  /**
   * Scoring columns held in memory (by row id), so ranking a few hundred candidates touches no disk pages. Read on
   * first use: a connection that only serves details and photos (the HTTP thread, when searches run in places
   * threads) never pays their memory or their seconds of loading.
   */
  private columns(): ScoringColumns {
    return (this.cols ??= this.loadColumns());
  }

  /**
   * From the columns file beside places.db when it matches this file (milliseconds), else one pass over the rows
   * (seconds on a country), then written there for the next start (columns-file.ts).
   */
  private loadColumns(): ScoringColumns {
    const side = columnsFileOf(this.file);
    const size = this.count + 1;
    try {
      const stored = readColumnsFile(side, this.generation, size);
      if (stored) {
        this.columnsFrom = 'file';
        return stored;
      }
    } catch (e) {
      this.columnsNote = `${side} unreadable (${(e as Error).message}); read from places.db instead`;
    }
    const cols = readColumns(this.db, this.generation, size);
    this.columnsFrom = 'places.db';
    try {
      writeColumnsFile(side, cols);
    } catch (e) {
      this.columnsNote = `${side} not written (${(e as Error).message}); the next start reads places.db again`;
    }
    return cols;
  }

  /**
   * Writes the columns file of the places.db at `file` as `to` (the builder does, before it renames a new places.db
   * over the live one, so the first start after an import maps them in rather than making a pass over the rows).
   */
  static writeColumnsFileOf(file: string, to: string): void {
    const index = new PlacesIndex(file);
    try {
      writeColumnsFile(to, readColumns(index.db, index.generation, index.count + 1));
    } finally {
      index.close();
    }
  }

  /** Reads the scoring columns now (a places thread does, before it reports ready). */
  warm(): this {
    this.columns();
    return this;
  }

  /** The columns, to hand to other threads reading the same file (their memory is shared, not copied). */
  get sharedColumns(): ScoringColumns {
    return this.columns();
  }

  /** Takes columns another thread read from the same places.db; false (and nothing taken) when they do not fit it. */
  useColumns(c: ScoringColumns): boolean {
    if (c.generation !== this.generation || c.size !== this.count + 1 || c.nameAt.length !== c.size + 1) return false;
    this.cols = c;
    return true;
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
  /** Place `id`'s country code ('' when none). */
  countryOf(id: number): string {
    const c = this.columns();
    return c.countries[c.country[id]!]!;
  }
  kindOf(id: number): string {
    const c = this.columns();
    return c.kinds[c.kind[id]!]!;
  }
  /** Place `id`'s search names. */
  names(id: number): string[] {
    const c = this.columns();
    const b = c.nameBytes;
    return Buffer.from(b.buffer, b.byteOffset + c.nameAt[id]!, c.nameAt[id + 1]! - c.nameAt[id]!)
      .toString('utf8')
      .split('|');
  }

  /** Row ids matching an FTS5 expression, most important first (rows were inserted in importance order). */
  match(expr: string, limit: number): number[] {
    return this.fts.all(expr, limit).map((r) => r.rowid);
  }

  /**
   * The index's terms starting with `prefix`, or undefined when there are more than `max`. FTS5 answers a prefix
   * longer than its prefix indexes (schema.ts FTS_PREFIX_MAX) by merging the whole document list of every term
   * that starts with it before it intersects anything: 3-4 ms for a street word ("strasse"*) at 600 copies, the
   * slow tail of autocomplete. The same terms matched one by one (OR) are intersected lazily: 0.1 ms.
   */
  prefixTerms(prefix: string, max: number): string[] | undefined {
    const rows = this.vocabStmt.all(prefix, prefix + '\u{10FFFF}', max + 1);
    return rows.length > max ? undefined : rows.map((r) => r.term);
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

/** A typed array over a SharedArrayBuffer of its own. */
function shared<T>(of: new (b: SharedArrayBuffer) => T, bytesPer: number, n: number): T {
  return new of(new SharedArrayBuffer(Math.max(1, n) * bytesPer));
}

/** Reads the scoring columns of `size - 1` places (one pass over the table). */
function readColumns(db: Database.Database, generation: string, size: number): ScoringColumns {
  const lat = shared(Float64Array, 8, size),
    lng = shared(Float64Array, 8, size),
    importance = shared(Float32Array, 4, size),
    country = shared(Uint16Array, 2, size),
    kind = shared(Uint16Array, 2, size),
    nameAt = shared(Uint32Array, 4, size + 1);
  const countries = [''],
    kinds = [''];
  const codeOf = (table: string[], codes: Map<string, number>, s: string) => {
    let k = codes.get(s);
    if (k === undefined) {
      if (table.length > 0xffff) throw new Error('places.db: more than 65,535 distinct countries or kinds');
      codes.set(s, (k = table.length));
      table.push(s);
    }
    return k;
  };
  const countryCodes = new Map([['', 0]]),
    kindCodes = new Map([['', 0]]);
  // names go into a growing buffer first (their total is not known before the pass), then into shared memory
  let bytes = Buffer.allocUnsafe(1 << 20),
    at = 0;
  const ends = new Uint32Array(size);
  const rows = db
    .prepare('SELECT id, lat, lng, importance, country, kind, search_names FROM places ORDER BY id')
    .raw()
    .iterate() as Iterable<[number, number, number, number, string | null, string, string]>;
  let last = 0;
  for (const [id, la, ln, imp, cc, kd, names] of rows) {
    for (let k = last + 1; k < id; k++) ends[k] = at; // ids without a row: no names
    const need = at + Buffer.byteLength(names);
    if (need > bytes.length) {
      const b = Buffer.allocUnsafe(Math.max(need, 2 * bytes.length));
      bytes.copy(b, 0, 0, at);
      bytes = b;
    }
    at += bytes.write(names, at, 'utf8');
    ends[id] = at;
    lat[id] = la;
    lng[id] = ln;
    importance[id] = imp;
    country[id] = codeOf(countries, countryCodes, cc ?? '');
    kind[id] = codeOf(kinds, kindCodes, kd);
    last = id;
  }
  for (let k = last + 1; k < size; k++) ends[k] = at;
  // nameAt[id] is where id's names start: the end of id - 1's
  for (let id = 1; id < size; id++) nameAt[id] = ends[id - 1]!;
  nameAt[size] = at;
  const nameBytes = shared(Uint8Array, 1, at);
  nameBytes.set(bytes.subarray(0, at));
  return { generation, size, lat, lng, importance, country, countries, kind, kinds, nameAt, nameBytes };
}
