import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
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
