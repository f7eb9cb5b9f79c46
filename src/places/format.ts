import type { Locale, PlaceLookup, PlaceRecord } from './types.js';
import type { IndexedPlace } from '../store/places/index-db.js';

/** The name to show in the caller's locale: Arabic or English when known, else the local name. */
export const displayName = (p: IndexedPlace, locale: Locale): string =>
  (locale === 'ar' ? p.name_ar : p.name_en) || p.name;

const SEP: Record<Locale, string> = { en: ', ', ar: '، ' };

/** Street line: "12 Rue Grimaldi" (house number first in both locales, as addresses are posted in the region). */
export const streetLine = (p: IndexedPlace): string => [p.housenumber, p.street].filter(Boolean).join(' ');

/** Address context for a result: street line (for POIs and addresses) then locality/country context. */
export function addressOf(p: IndexedPlace, locale: Locale): string {
  const context = locale === 'ar' ? p.context_ar || p.context_en : p.context_en || p.context_ar;
  const parts = p.kind === 'street' ? [context] : [streetLine(p), context];
  const own = displayName(p, locale);
  return joinAddress(
    parts.filter((x) => x && x !== own),
    locale,
  );
}

/** One flat address line: the place itself followed by its context. */
export function formattedAddress(p: IndexedPlace, locale: Locale): string {
  const head = p.kind === 'address' ? streetLine(p) || displayName(p, locale) : displayName(p, locale);
  const rest = addressOf(p, locale);
  const tail =
    p.kind === 'address' ? (locale === 'ar' ? p.context_ar || p.context_en : p.context_en || p.context_ar) : rest;
  return joinAddress([head, tail], locale);
}

/** Joins address parts, dropping repeats ("Monaco, Monaco" where the city and the country share a name). */
export function joinAddress(parts: Array<string | null | undefined>, locale: Locale): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of parts) {
    for (const piece of (part ?? '').split(/\s*[،,]\s*/)) {
      const key = piece.trim().toLowerCase();
      if (key && !seen.has(key)) {
        seen.add(key);
        out.push(piece.trim());
      }
    }
  }
  return out.join(SEP[locale]);
}

/** The spec's minimal record for a cache_only miss: the caller's hints, nothing looked up. */
export const cacheOnlyRecord = (l: PlaceLookup): PlaceRecord & { miss: false } => ({
  place_id: l.id,
  name: l.hintName ?? '',
  address: '',
  lat: l.hintLat ?? 0,
  lng: l.hintLng ?? 0,
  ownership_tier: 'seed',
  driver_verifications: 0,
  miss: false,
});
