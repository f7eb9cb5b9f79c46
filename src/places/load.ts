import { copyFileSync, constants, existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../resources/paths.js';
import { PlacesBuilder, type NewPlace } from '../store/places/builder.js';
import { PlacesIndex, placesFileVersion } from '../store/places/index-db.js';
import { PLACES_FILE, PLACES_SCHEMA_VERSION } from '../store/places/schema.js';
import { columnsFileOf } from '../store/places/columns-file.js';
import { gazetteerPlaces, GAZETTEER_SOURCE } from './sources/gazetteer.js';

/** Built once by `npm install` (prepare) so a fresh data directory starts in a second, not in twenty. */
export const BASE_PLACES = packagePath('data', 'base', PLACES_FILE);

/**
 * Builds the embedded default (GeoNames cities500 + countries, English and Arabic names) into `file`; with `keep`,
 * only the places it keeps (the same rows otherwise, under the same source).
 */
export async function buildGazetteer(file: string, keep?: (p: NewPlace) => boolean): Promise<number> {
  const b = new PlacesBuilder(file);
  let n = 0;
  try {
    for await (const p of gazetteerPlaces()) {
      if (keep && !keep(p)) continue;
      b.add(p);
      n++;
    }
    b.finish([{ source: GAZETTEER_SOURCE, rows: n, file: 'cities500' }]);
  } catch (e) {
    b.abort();
    throw e;
  }
  return n;
}

/**
 * A fresh data directory gets the embedded gazetteer: copied from the prebuilt base, or built on the spot. A places.db
 * of an older layout is set aside (places.db.old-<time>) and replaced: imports must then be run again.
 */
export async function ensurePlacesDb(dataDir: string): Promise<'present' | 'copied' | 'built' | 'upgraded'> {
  const file = join(dataDir, PLACES_FILE);
  if (!existsSync(file)) return installBase(file);
  if (placesFileVersion(file) === PLACES_SCHEMA_VERSION) return 'present';
  renameSync(file, `${file}.old-${Date.now()}`);
  await installBase(file);
  return 'upgraded';
}

async function installBase(file: string): Promise<'copied' | 'built'> {
  if (existsSync(BASE_PLACES) && placesFileVersion(BASE_PLACES) === PLACES_SCHEMA_VERSION) {
    // the scoring columns first (when the base has them), so a places thread never pairs the new file with old ones
    const columns = columnsFileOf(BASE_PLACES);
    if (existsSync(columns)) copyInto(columns, columnsFileOf(file));
    copyInto(BASE_PLACES, file);
    return 'copied';
  }
  await buildGazetteer(file);
  return 'built';
}

/** Copies `from` to `to` through a temporary file renamed over it (a reader never sees half of it). */
function copyInto(from: string, to: string): void {
  const tmp = `${to}.copy-${process.pid}`;
  copyFileSync(from, tmp, constants.COPYFILE_FICLONE);
  renameSync(tmp, to);
}

export function openPlacesIndex(dataDir: string): PlacesIndex | undefined {
  const file = join(dataDir, PLACES_FILE);
  return existsSync(file) ? new PlacesIndex(file) : undefined;
}
