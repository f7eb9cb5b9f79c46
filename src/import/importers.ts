import type { Importer } from './types.js';
import { placesImporter } from './places-importer.js';
import { renderImporter } from './render-importer.js';
import { roadsImporter } from './roads-importer.js';

/** Every importer `svcmaps import` runs, in order; each decides whether it accepts the file's format. */
export const IMPORTERS: Importer[] = [renderImporter, placesImporter, roadsImporter];
