import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real OSM extracts the tests use live in the repository (test/fixtures/osm, ODbL): nothing outside it is read. */
export const OSM_FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'osm');
export const MONACO_PBF = join(OSM_FIXTURES, 'monaco.osm.pbf');
export const LIECHTENSTEIN_PBF = join(OSM_FIXTURES, 'liechtenstein-2013-08-03.osm.pbf');
