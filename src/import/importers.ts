import type { Importer } from './types.js';

/** Every importer `svcmaps import` runs, in order; each decides whether it accepts the file's format. */
export const IMPORTERS: Importer[] = [];
