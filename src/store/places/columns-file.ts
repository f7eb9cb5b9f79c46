import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { isErrno } from '../../core/errors.js';
import type { ScoringColumns } from './index-db.js';

/**
 * The scoring columns of a places.db, kept beside it (`places.db.columns`) as the bytes of their typed arrays, so a
 * places thread that starts maps them in with a few reads instead of one pass over every row: the pass costs ~0.3 s
 * for the embedded gazetteer and seconds at country scale, the reads milliseconds. Written by the builder before it
 * swaps a new places.db in (and by the first thread that had to make the pass, for files written before this one
 * existed). A file whose generation or row count does not match its places.db, of another layout, or cut short is
 * not used: the columns are then read from places.db as before.
 *
 * Layout: "SVCMAPS-COLUMNS\n", a little-endian uint32 header length, the header (JSON: layout, generation, size,
 * countries, kinds, nameBytes), padding to 8 bytes, then lat, lng (float64), importance (float32), country, kind
 * (uint16), nameAt (uint32, size + 1), nameBytes, each starting on an 8-byte boundary.
 */
const MAGIC = Buffer.from('SVCMAPS-COLUMNS\n');
const LAYOUT = 1;

export const columnsFileOf = (placesFile: string): string => `${placesFile}.columns`;

interface Header {
  layout: number;
  generation: string;
  size: number;
  countries: string[];
  kinds: string[];
  nameBytes: number;
}

const pad8 = (n: number) => (n + 7) & ~7;

/** The arrays in file order, with their element sizes. */
function arrays(c: ScoringColumns) {
  return [c.lat, c.lng, c.importance, c.country, c.kind, c.nameAt, c.nameBytes] as const;
}

/** Writes `cols` to `file` (a temporary file renamed over it, so a reader never sees half of one). */
export function writeColumnsFile(file: string, cols: ScoringColumns): void {
  const header: Header = {
    layout: LAYOUT,
    generation: cols.generation,
    size: cols.size,
    countries: cols.countries,
    kinds: cols.kinds,
    nameBytes: cols.nameBytes.length,
  };
  const json = Buffer.from(JSON.stringify(header));
  const head = Buffer.alloc(pad8(MAGIC.length + 4 + json.length));
  MAGIC.copy(head);
  head.writeUInt32LE(json.length, MAGIC.length);
  json.copy(head, MAGIC.length + 4);
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, head);
    for (const a of arrays(cols)) {
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      writeSync(fd, bytes);
      const gap = pad8(bytes.length) - bytes.length;
      if (gap) writeSync(fd, Buffer.alloc(gap));
    }
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, file);
}

/** Reads exactly `into.length` bytes at `at` (throws when the file is shorter). */
function readFully(fd: number, into: Uint8Array, at: number): void {
  for (let done = 0; done < into.length;) {
    const n = readSync(fd, into, done, into.length - done, at + done);
    if (n === 0) throw new Error('places columns file cut short');
    done += n;
  }
}

/**
 * The columns stored in `file` for a places.db of this generation and size, in SharedArrayBuffers (shared with the
 * other places threads as the ones read from SQLite are); undefined when there is no such file or it does not fit
 * (another generation, size or layout: a stale file is no error). A file that claims to fit but cannot be read
 * throws.
 */
export function readColumnsFile(file: string, generation: string, size: number): ScoringColumns | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined; // expected: not written yet (an older data directory)
    throw e;
  }
  try {
    const fileBytes = fstatSync(fd).size;
    const start = Buffer.alloc(MAGIC.length + 4);
    if (fileBytes < start.length) return undefined;
    readFully(fd, start, 0);
    if (!start.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const jsonBytes = start.readUInt32LE(MAGIC.length);
    if (jsonBytes > fileBytes) return undefined;
    const json = Buffer.alloc(jsonBytes);
    readFully(fd, json, MAGIC.length + 4);
    const h = JSON.parse(json.toString('utf8')) as Header;
    if (h.layout !== LAYOUT || h.generation !== generation || h.size !== size) return undefined;
    const shared = <T>(of: new (b: SharedArrayBuffer) => T, bytesPer: number, n: number) =>
      new of(new SharedArrayBuffer(Math.max(1, n) * bytesPer));
    const cols: ScoringColumns = {
      generation,
      size,
      lat: shared(Float64Array, 8, size),
      lng: shared(Float64Array, 8, size),
      importance: shared(Float32Array, 4, size),
      country: shared(Uint16Array, 2, size),
      countries: h.countries,
      kind: shared(Uint16Array, 2, size),
      kinds: h.kinds,
      nameAt: shared(Uint32Array, 4, size + 1),
      nameBytes: shared(Uint8Array, 1, h.nameBytes),
    };
    let at = pad8(MAGIC.length + 4 + jsonBytes);
    for (const a of arrays(cols)) {
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      readFully(fd, bytes, at);
      at += pad8(bytes.length);
    }
    return cols;
  } finally {
    closeSync(fd);
  }
}
