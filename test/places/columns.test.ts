import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PLACES } from '../../src/places/load.js';
import { search } from '../../src/places/search.js';
import { columnsFileOf, readColumnsFile, writeColumnsFile } from '../../src/store/places/columns-file.js';
import { PlacesIndex } from '../../src/store/places/index-db.js';
import { PLACES_FILE } from '../../src/store/places/schema.js';
import { withoutGazetteer } from '../helpers/gazetteer.js';

// The scoring columns kept beside places.db: a places thread maps them in at start instead of a pass over the rows.
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A data directory with a copy of the embedded gazetteer's places.db and no columns file. */
function gazetteerCopy(): string {
  const d = mkdtempSync(join(tmpdir(), 'svcmaps-columns-'));
  dirs.push(d);
  copyFileSync(BASE_PLACES, join(d, PLACES_FILE));
  return join(d, PLACES_FILE);
}

const input = { q: 'amman', bias: { lat: 31.95, lng: 35.93 }, biasGiven: false, country: 'jo', locale: 'en' as const };

describe('places scoring columns file', () => {
  it('the first warm reads places.db and writes the file; the next maps the same columns in and ranks the same', () => {
    const file = gazetteerCopy();
    const first = new PlacesIndex(file).warm();
    expect(first.columnsFrom).toBe('places.db');
    expect(first.columnsNote).toBeUndefined();
    expect(existsSync(columnsFileOf(file))).toBe(true);
    const second = new PlacesIndex(file).warm();
    expect(second.columnsFrom).toBe('file');
    const [a, b] = [first.sharedColumns, second.sharedColumns];
    expect(b.size).toBe(a.size);
    expect(b.countries).toEqual(a.countries);
    expect(b.kinds).toEqual(a.kinds);
    for (const k of ['lat', 'lng', 'importance', 'country', 'kind', 'nameAt', 'nameBytes'] as const) {
      expect(Buffer.from(b[k].buffer).equals(Buffer.from(a[k].buffer)), k).toBe(true);
      expect(b[k].buffer).toBeInstanceOf(SharedArrayBuffer); // shared with the other places threads as before
    }
    expect(search(second, input)).toEqual(search(first, input));
    expect(search(second, input)[0]?.name).toBe('Amman');
    first.close();
    second.close();
  });

  it('a file of another generation is not used; a file cut short is said and replaced; both read places.db', () => {
    const file = gazetteerCopy();
    const index = new PlacesIndex(file).warm();
    const cols = index.sharedColumns;
    index.close();
    writeColumnsFile(columnsFileOf(file), { ...cols, generation: 'an older import' });
    expect(readColumnsFile(columnsFileOf(file), cols.generation, cols.size)).toBeUndefined();
    const stale = new PlacesIndex(file).warm();
    expect(stale.columnsFrom).toBe('places.db');
    expect(stale.columnsNote).toBeUndefined(); // stale is no error: rewritten for this generation
    expect(readColumnsFile(columnsFileOf(file), cols.generation, cols.size)?.size).toBe(cols.size);
    stale.close();

    truncateSync(columnsFileOf(file), 4096);
    expect(() => readColumnsFile(columnsFileOf(file), cols.generation, cols.size)).toThrow(/cut short/);
    const cut = new PlacesIndex(file).warm();
    expect(cut.columnsFrom).toBe('places.db');
    expect(cut.columnsNote).toMatch(/unreadable \(places columns file cut short\)/);
    expect(search(cut, input)[0]?.name).toBe('Amman');
    cut.close();
    expect(new PlacesIndex(file).warm().columnsFrom).toBe('file'); // the replacement is whole
  });

  it('the builder writes it beside every places.db it swaps in, and the embedded gazetteer ships one', () => {
    const d = mkdtempSync(join(tmpdir(), 'svcmaps-columns-built-'));
    dirs.push(d);
    withoutGazetteer(d);
    const file = join(d, PLACES_FILE);
    expect(existsSync(columnsFileOf(file))).toBe(true);
    expect(new PlacesIndex(file).warm().columnsFrom).toBe('file');
    expect(readFileSync(columnsFileOf(BASE_PLACES)).subarray(0, 16).toString()).toBe('SVCMAPS-COLUMNS\n');
  });
});
