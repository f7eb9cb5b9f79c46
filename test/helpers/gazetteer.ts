import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildGazetteer } from '../../src/places/load.js';
import { PlacesBuilder } from '../../src/store/places/builder.js';
import { PLACES_FILE } from '../../src/store/places/schema.js';

/**
 * Gives a data directory a places index of the current layout that holds no place, where a fresh one gets the
 * embedded gazetteer (200,000 places): every places import carries the places of other sources over and rebuilds the
 * search index over all of them, which on the gazetteer is most of the time a Monaco import takes. For tests whose
 * checks concern the import itself, not what the gazetteer holds.
 */
export function withoutGazetteer(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  new PlacesBuilder(join(dataDir, PLACES_FILE)).finish([]);
}

/**
 * Gives a data directory the places index a fresh one gets, the embedded gazetteer, but with only its places in the
 * given countries (ISO codes, lower case) and its row for each country: the same rows, built the same way, under the
 * same source, a few thousand instead of 200,000. For tests that import places beside the gazetteer (each import
 * rebuilds the search index over every carried place) and search only these countries' places.
 */
export async function regionalGazetteer(dataDir: string, countries: string[]): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  await buildGazetteer(join(dataDir, PLACES_FILE), (p) => p.kind === 'country' || countries.includes(p.country ?? ''));
}
