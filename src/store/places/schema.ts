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
  -- What this file's index holds beyond its layout version: 'near_tokens' (every place's, see nearTokens; the value
  -- is their version, NEAR_TOKENS_VERSION).
  CREATE TABLE places_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Coarse 1-degree cell token, indexed with the names so FTS can intersect "matches the text" with "is near here". */
export const cellToken = (lat: number, lng: number): string => `zq${Math.floor(lat) + 90}x${Math.floor(lng) + 180}`;

/** `token` of the 3x3 one-degree cells around a point (a search's neighbourhood), each once, as an FTS5 OR. */
export function cellsAround(lat: number, lng: number, token: (lat: number, lng: number) => string): string {
  const cells = new Set<string>();
  for (const dLat of [-1, 0, 1]) for (const dLng of [-1, 0, 1]) cells.add(token(lat + dLat, lng + dLng));
  return [...cells].join(' OR ');
}

/**
 * Near tokens: a place's 1-degree cell joined with the first NEAR_CHARS characters of each of its words ("vaduz" in
 * cell 137x189 gives "ꙮ137189vad"), and with each of its words of NEAR_CHARS - 1 characters whole ("im", "al",
 * "بن"). A typed word of at least NEAR_CHARS characters, or a whole typed word of two (one the user has typed past),
 * is near here exactly when one of the nine cells around the point has its near token, so the nearby candidates of a
 * search are the union of nine short lists. Intersected with the cell tokens instead, FTS walked every place of the
 * country with those words (1.4 ms at 600 copies, where every name is in 600 places; "Im L", "Al S": 10-15 ms).
 * The mark is a letter FTS5 keeps in a token and no name has, so no typed word begins a near token; the cell is 3 + 3
 * digits, so a word starting with a digit cannot run into it, and a two-character word's token is shorter than every
 * three-character one.
 */
const NEAR_CHARS = 3;
/** places_meta `near_tokens` of a file whose near tokens include two-character words (1: longer words only). */
export const NEAR_TOKENS_VERSION = 2;
const NEAR_MARK = '\uA66E';
/** Characters FTS5's unicode61 tokenizer separates tokens at: a near token is made of one token's beginning. */
const FTS_SEPARATORS = /[^\p{L}\p{N}\p{M}\p{Co}]+/u;
const pad3 = (n: number) => String(n).padStart(3, '0');
const nearCell = (lat: number, lng: number) =>
  `${NEAR_MARK}${pad3(Math.floor(lat) + 90)}${pad3(Math.floor(lng) + 180)}`;

/**
 * The near key of `word` when it is one FTS token: its first NEAR_CHARS characters, or, when `whole` (the word is
 * complete, not a prefix being typed) and it is one character shorter, the word itself.
 */
function nearKey(word: string, whole: boolean): string | undefined {
  if (FTS_SEPARATORS.test(word)) return undefined;
  const chars = [...word];
  if (chars.length >= NEAR_CHARS) return chars.slice(0, NEAR_CHARS).join('');
  return whole && chars.length === NEAR_CHARS - 1 ? word : undefined;
}

/** The near tokens of a place at (lat, lng) whose FTS document is `tokens` (space-separated), space-separated. */
export function nearTokens(tokens: string, lat: number, lng: number): string {
  const cell = nearCell(lat, lng);
  const out = new Set<string>();
  for (const word of tokens.split(FTS_SEPARATORS)) {
    const k = nearKey(word, true);
    if (k) out.add(cell + k);
  }
  return [...out].join(' ');
}

/**
 * FTS5 expression: places in the 3x3 cells around (lat, lng) with a word beginning as `word` does (`whole`: a word
 * that is `word`, which a two-character word needs); undefined when `word` has no near key (the caller intersects
 * with the cell tokens instead).
 */
export function nearExpression(lat: number, lng: number, word: string, whole = false): string | undefined {
  const k = nearKey(word, whole);
  return k && cellsAround(lat, lng, (a, b) => `"${nearCell(a, b)}${k}"`);
}

export const LOCALITY_KINDS = ['city', 'town', 'village', 'suburb', 'quarter', 'neighbourhood', 'hamlet', 'locality'];
