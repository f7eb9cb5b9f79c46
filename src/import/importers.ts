import type { Importer } from './types.js';
import { placesImporter } from './places-importer.js';

/** Every importer `svcmaps import` runs, in order; each decides whether it accepts the file's format. */
export const IMPORTERS: Importer[] = [placesImporter];
