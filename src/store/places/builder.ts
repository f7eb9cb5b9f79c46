import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { columnsFileOf } from './columns-file.js';
import { PlacesIndex } from './index-db.js';
import { articleVariants, normalizeText, tokenize } from '../../core/normalize.js';
import {
  CONTEXT_MARK,
  cellToken,
  FINAL_SQL,
  LOCALITY_KINDS,
  nearTokens,
  NEAR_TOKENS_VERSION,
  PLACE_COLUMNS,
  PLACES_SCHEMA_VERSION,
  STAGING_SQL,
  type PlaceRow,
} from './schema.js';

export type NewPlace = Omit<PlaceRow, 'search_names'> & { altNames?: string[] };
export type Segment = [lat1: number, lng1: number, lat2: number, lng2: number];

const cols = PLACE_COLUMNS.join(', ');
const MAX_ALT_NAMES = 24;

/**
 * Normalised full names (for scoring) and the FTS document (name tokens, article variants, a coarse cell token).
 * The address context ("Jordan", "Giza, Egypt") is indexed too, and "name context" strings are kept for scoring, so
 * "Amman, Jordan" or "صيدلية الجيزة" find their place; context matches score below name matches (see search.ts).
 */
function searchFields(p: NewPlace): { search_names: string; tokens: string } {
  const names = [p.name, p.name_en, p.name_ar, ...(p.altNames ?? []).slice(0, MAX_ALT_NAMES)].filter(
    (n): n is string => !!n,
  );
  const full = [...new Set(names.map(normalizeText).filter(Boolean))];
  const contexts = [
    ...new Set(
      [p.context_en, p.context_ar]
        .filter((c): c is string => !!c)
        .map(normalizeText)
        .filter(Boolean),
    ),
  ];
  const primary = [
    ...new Set(
      [p.name, p.name_en, p.name_ar]
        .filter((n): n is string => !!n)
        .map(normalizeText)
        .filter(Boolean),
    ),
  ];
  const withContext = primary.flatMap((n) => contexts.map((c) => `${CONTEXT_MARK}${n} ${c}`));
  const toks = new Set<string>();
  for (const n of [...names, ...contexts]) for (const t of tokenize(n)) for (const v of articleVariants(t)) toks.add(v);
  if (p.housenumber) toks.add(normalizeText(p.housenumber));
  return {
    search_names: [...full, ...withContext].join('|'),
    tokens: `${[...toks].join(' ')} ${cellToken(p.lat, p.lng)}`,
  };
}

/**
 * Builds a new places.db beside the live one and swaps it in with a rename, so searches never see a half-built index
 * and an interrupted import leaves the previous one in service. Rows of other sources are carried over; rows of the
 * source being imported are replaced (re-running an import updates it).
 */
export class PlacesBuilder {
  private readonly tmp: string;
  private readonly db: Database.Database;
  private readonly insert;
  private readonly insertSeg;
  private count = 0;
  private carried: Array<{ source: string; imported_at: string; rows: number; file: string | null }> = [];

  constructor(private readonly finalPath: string) {
    this.tmp = `${finalPath}.building-${process.pid}`;
    rmSync(this.tmp, { force: true });
    this.db = new Database(this.tmp);
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.exec(
      `${STAGING_SQL} CREATE TABLE seg_staging (cid TEXT NOT NULL, lat1 REAL, lng1 REAL, lat2 REAL, lng2 REAL);`,
    );
    this.insert = this.db.prepare(
      `INSERT OR REPLACE INTO staging (${cols}, tokens) VALUES (${PLACE_COLUMNS.map((c) => '@' + c).join(', ')}, @tokens)`,
    );
    this.insertSeg = this.db.prepare('INSERT INTO seg_staging VALUES (?, ?, ?, ?, ?)');
    this.db.exec('BEGIN');
  }

  /** Copies every row whose source is not `replacing` from the live database, if there is one. */
  carryOver(replacing: string): number {
    if (!existsSync(this.finalPath)) return 0;
    this.db.exec('COMMIT');
    this.db.prepare('ATTACH DATABASE ? AS live').run(this.finalPath);
    const n = this.db
      .prepare(
        `INSERT INTO staging (${cols}, tokens) SELECT ${cols
          .split(', ')
          .map((c) => 'p.' + c)
          .join(', ')}, t.tokens FROM live.places p JOIN live.place_tokens t ON t.id = p.id WHERE p.source != ?`,
      )
      .run(replacing).changes;
    this.db
      .prepare(
        `INSERT INTO seg_staging SELECT p.cid, s.lat1, s.lng1, s.lat2, s.lng2 FROM live.street_segments s JOIN live.places p ON p.id = s.place_id WHERE p.source != ?`,
      )
      .run(replacing);
    this.carried = this.db
      .prepare('SELECT source, imported_at, rows, file FROM live.sources WHERE source != ?')
      .all(replacing) as typeof this.carried;
    this.db.exec('DETACH DATABASE live; BEGIN');
    return n;
  }

  add(p: NewPlace, segments?: Segment[]): void {
    const { altNames: _alt, ...row } = p;
    this.insert.run({ ...row, ...searchFields(p) });
    if (segments) for (const s of segments) this.insertSeg.run(p.cid, ...s);
    if (++this.count % 50_000 === 0) this.db.exec('COMMIT; BEGIN');
  }

  /** Orders rows by importance, builds FTS, R*Trees and the sources table, then renames over the live file. */
  finish(sources: Array<{ source: string; rows: number; file?: string }>): void {
    const db = this.db;
    db.exec('COMMIT');
    db.exec(FINAL_SQL);
    // every row's, carried ones too: they are made from the tokens each row keeps
    db.function('near_tokens', { deterministic: true }, (tokens, lat, lng) =>
      nearTokens(tokens as string, lat as number, lng as number),
    );
    db.exec(`
      BEGIN;
      INSERT INTO places (${cols}) SELECT ${cols} FROM staging ORDER BY importance DESC, cid;
      INSERT INTO place_tokens (id, tokens) SELECT p.id, s.tokens FROM places p JOIN staging s ON s.cid = p.cid;
      INSERT INTO places_fts (rowid, tokens)
        SELECT t.id, t.tokens || ' ' || near_tokens(t.tokens, p.lat, p.lng) FROM place_tokens t JOIN places p ON p.id = t.id;
      INSERT INTO places_rtree SELECT id, lat, lat, lng, lng FROM places;
      INSERT INTO localities_rtree SELECT id, lat, lat, lng, lng FROM places WHERE kind IN (${LOCALITY_KINDS.map((k) => `'${k}'`).join(', ')});
      INSERT INTO street_segments (place_id, lat1, lng1, lat2, lng2)
        SELECT p.id, s.lat1, s.lng1, s.lat2, s.lng2 FROM seg_staging s JOIN places p ON p.cid = s.cid;
      INSERT INTO segments_rtree SELECT id, MIN(lat1, lat2), MAX(lat1, lat2), MIN(lng1, lng2), MAX(lng1, lng2) FROM street_segments;
      CREATE INDEX places_source ON places (source);
      INSERT INTO places_meta VALUES ('near_tokens', '${NEAR_TOKENS_VERSION}');
      DROP TABLE staging; DROP TABLE seg_staging;
      COMMIT;`);
    const now = new Date().toISOString();
    const put = db.prepare('INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?)');
    for (const s of this.carried) put.run(s.source, s.imported_at, s.rows, s.file);
    for (const s of sources) put.run(s.source, now, s.rows, s.file ?? null);
    db.exec("INSERT INTO places_fts(places_fts) VALUES('optimize')");
    db.pragma(`user_version = ${PLACES_SCHEMA_VERSION}`);
    db.close();
    // the scoring columns beside it first: a server warming meanwhile finds them of another generation than the
    // places.db it has open and reads that one's rows instead
    PlacesIndex.writeColumnsFileOf(this.tmp, columnsFileOf(this.finalPath));
    renameSync(this.tmp, this.finalPath);
  }

  abort(): void {
    try {
      this.db.close();
    } finally {
      rmSync(this.tmp, { force: true });
    }
  }
}
