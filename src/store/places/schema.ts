/** The places index in the data directory (and the prebuilt base copy of the embedded gazetteer). */
export const PLACES_FILE = 'places.db';

/** Bumped whenever the layout below changes; an older places.db is set aside and rebuilt. */
export const PLACES_SCHEMA_VERSION = 3;

/** Marks a scoring entry that is a name followed by its address context (never produced by normalisation). */
export const CONTEXT_MARK = '\u0001';

/**
 * places.db: one row per searchable thing (gazetteer city, OSM place, POI, street, address).
 * Rows are inserted in descending importance, so FTS5 answers in rowid order = best first, and a LIMIT on a broad
 * prefix returns the most important matches without sorting the whole match set.
 */
export const PLACE_COLUMNS = [
  'cid',
  'source',
  'kind',
  'name',
  'name_en',
  'name_ar',
  'category',
  'country',
  'context_en',
  'context_ar',
  'street',
  'housenumber',
  'lat',
  'lng',
  'importance',
  'phone',
  'website',
  'hours',
  'photos',
  'search_names',
] as const;

export type PlaceColumn = (typeof PLACE_COLUMNS)[number];

export interface PlaceRow {
  cid: string;
  source: string;
  kind: string;
  name: string;
  name_en: string | null;
  name_ar: string | null;
  category: string | null;
  country: string | null;
  context_en: string | null;
  context_ar: string | null;
  street: string | null;
  housenumber: string | null;
  lat: number;
  lng: number;
  importance: number;
  phone: string | null;
  website: string | null;
  hours: string | null;
  photos: string | null; // JSON array of URLs
  search_names: string; // normalised names joined by '|', for scoring
}

/** Longest typed word (in characters) FTS5 has a prefix index for; longer ones see PlacesIndex.prefixTerms. */
export const FTS_PREFIX_MAX = 6;

const columnsSql = `
  cid TEXT NOT NULL UNIQUE, source TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
  name_en TEXT, name_ar TEXT, category TEXT, country TEXT, context_en TEXT, context_ar TEXT,
  street TEXT, housenumber TEXT, lat REAL NOT NULL, lng REAL NOT NULL, importance REAL NOT NULL,
  phone TEXT, website TEXT, hours TEXT, photos TEXT, search_names TEXT NOT NULL`;

export const STAGING_SQL = `CREATE TABLE staging (${columnsSql}, tokens TEXT NOT NULL);`;

export const FINAL_SQL = `
  CREATE TABLE places (id INTEGER PRIMARY KEY, ${columnsSql});
  -- The FTS document of each place, kept apart so scoring reads compact rows.
  CREATE TABLE place_tokens (id INTEGER PRIMARY KEY, tokens TEXT NOT NULL);
  -- Prefix indexes up to 6 characters: a typed word of 4-6 letters ("stra", "stat") matched by expanding every term
  -- that starts with it was the slow tail of autocomplete on a country (p99 9.9 -> 6.3 ms in-process at 600 copies;
  -- the index grows from 28 to 47 MB there). Longer words are matched as the terms they begin (prefixTerms).
  CREATE VIRTUAL TABLE places_fts USING fts5(tokens, content='', columnsize=0, detail=none,
    prefix='${Array.from({ length: FTS_PREFIX_MAX }, (_, i) => i + 1).join(' ')}',
    tokenize='unicode61 remove_diacritics 0');
  CREATE VIRTUAL TABLE places_rtree USING rtree(id, min_lat, max_lat, min_lng, max_lng);
  -- Localities alone, so "which town is this in" (a 20 km box) does not wade through every shop in a city.
  CREATE VIRTUAL TABLE localities_rtree USING rtree(id, min_lat, max_lat, min_lng, max_lng);
  CREATE TABLE street_segments (id INTEGER PRIMARY KEY, place_id INTEGER NOT NULL, lat1 REAL, lng1 REAL, lat2 REAL, lng2 REAL);
  CREATE VIRTUAL TABLE segments_rtree USING rtree(id, min_lat, max_lat, min_lng, max_lng);
  CREATE TABLE sources (source TEXT PRIMARY KEY, imported_at TEXT NOT NULL, rows INTEGER NOT NULL, file TEXT);
`;

/** Coarse 1-degree cell token, indexed with the names so FTS can intersect "matches the text" with "is near here". */
export const cellToken = (lat: number, lng: number): string => `zq${Math.floor(lat) + 90}x${Math.floor(lng) + 180}`;

export const LOCALITY_KINDS = ['city', 'town', 'village', 'suburb', 'quarter', 'neighbourhood', 'hamlet', 'locality'];
