import KDBush from 'kdbush';
import { existsSync } from 'node:fs';
import { haversineMeters } from '../../core/geo.js';
import { readContextLocalities, type ContextLocality as Locality } from '../../store/places/localities.js';
import { countryName } from './countries.js';

const REACH_M: Record<string, number> = { city: 20_000, town: 8_000, village: 3_000 };

/**
 * Address context for imported objects ("Zamalek, Cairo, Egypt"): the locality whose reach covers the point and its
 * country, taken from the places already in service (the gazetteer, earlier imports).
 */
export class ContextResolver {
  private readonly items: Locality[] = [];
  private readonly index: KDBush;

  constructor(placesDb: string) {
    if (existsSync(placesDb)) this.items = readContextLocalities(placesDb);
    this.index = new KDBush(Math.max(1, this.items.length));
    for (const l of this.items) this.index.add(l.lng, l.lat);
    if (!this.items.length) this.index.add(0, 0);
    this.index.finish();
  }

  resolve(
    lat: number,
    lng: number,
    ownLocality?: string,
  ): { country: string | null; context_en: string | null; context_ar: string | null } {
    let best: Locality | undefined;
    let bestRatio = Infinity;
    let nearestAny: Locality | undefined;
    let nearestD = Infinity;
    for (const i of this.index.within(lng, lat, 1.0)) {
      const l = this.items[i];
      if (!l) continue;
      const d = haversineMeters({ lat, lng }, l);
      if (d < nearestD) [nearestAny, nearestD] = [l, d];
      const ratio = d / (REACH_M[l.kind] ?? 3000);
      if (ratio < 1 && ratio < bestRatio) [best, bestRatio] = [l, ratio];
    }
    const country = (best ?? nearestAny)?.country ?? null;
    const join = (parts: Array<string | null | undefined>, sep: string) =>
      parts.filter((p) => p && p !== ownLocality).join(sep) || null;
    return {
      country,
      context_en: join([best ? best.name_en || best.name : null, countryName(country, 'en')], ', '),
      context_ar: join([best ? best.name_ar || best.name_en || best.name : null, countryName(country, 'ar')], '، '),
    };
  }
}
