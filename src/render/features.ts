import type { Box } from './mercator.js';

/** What the render importer stores and the tile renderer draws; coordinates are normalised Mercator. */
export type Layer = 'land' | 'water' | 'landuse' | 'building' | 'road' | 'waterway' | 'poi' | 'place';

export interface MapFeature {
  id: number;
  layer: Layer;
  /** Style class within the layer, e.g. road `primary`, landuse `park`, place `city`. */
  cls: string;
  minzoom: number;
  /** Label priority, lower first (e.g. city < town < village). */
  rank: number;
  name?: string;
  nameEn?: string;
  nameAr?: string;
  rings: Float64Array[];
  box: Box;
}

const ARABIC = /[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]/;
const isArabic = (s: string): boolean => ARABIC.test(s);

/**
 * Bilingual label lines: English (or the local name) first, Arabic second when it exists and differs, so a driver
 * reads either script. A name that is itself Arabic with no English form is shown once.
 */
export function labelLines(f: { name?: string; nameEn?: string; nameAr?: string }): string[] {
  const local = f.name?.trim();
  const en = f.nameEn?.trim() || (local && !isArabic(local) ? local : undefined);
  const ar = f.nameAr?.trim() || (local && isArabic(local) ? local : undefined);
  const lines: string[] = [];
  if (en) lines.push(en);
  if (ar && ar !== en) lines.push(ar);
  if (!lines.length && local) lines.push(local);
  return lines;
}
