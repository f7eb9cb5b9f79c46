import { haversineMeters, type LatLng } from '../core/geo.js';
import type { IndexedPlace, PlacesIndex, SegmentHit } from '../store/places/index-db.js';
import { displayName, formattedAddress, joinAddress, streetLine } from './format.js';
import type { Locale } from './types.js';

export interface ReverseHit {
  formatted_address: string;
  place_id?: string;
  source: 'fresh' | 'approximate' | 'no_address';
}

const ADDRESS_M = 60;
const POI_M = 35;
const STREET_M = 60;
/** How far a locality's name reaches, by kind: a city covers its suburbs, a village only itself. */
const LOCALITY_REACH_M: Record<string, number> = {
  city: 20_000,
  town: 8_000,
  village: 3_000,
  suburb: 2_500,
  quarter: 1_500,
  neighbourhood: 1_000,
  hamlet: 1_500,
  locality: 1_500,
};

const deg = (m: number, lat: number) => ({
  dLat: m / 111_320,
  dLng: m / (111_320 * Math.max(0.1, Math.cos((lat * Math.PI) / 180))),
});

function nearest<T extends LatLng>(at: LatLng, items: T[], maxM: number): T | undefined {
  let best: T | undefined;
  let bestD = maxM;
  for (const it of items) {
    const d = haversineMeters(at, it);
    if (d <= bestD) [best, bestD] = [it, d];
  }
  return best;
}

/** Distance from a point to a segment, on a local equirectangular projection (exact enough below a few km). */
function segmentDistance(at: LatLng, s: SegmentHit): number {
  const k = Math.cos((at.lat * Math.PI) / 180);
  const ax = (s.lng1 - at.lng) * k,
    ay = s.lat1 - at.lat,
    bx = (s.lng2 - at.lng) * k,
    by = s.lat2 - at.lat;
  const dx = bx - ax,
    dy = by - ay;
  const len2 = dx * dx + dy * dy;
  const t = len2 > 0 ? Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len2)) : 0;
  return Math.hypot(ax + t * dx, ay + t * dy) * 111_320;
}

/** The locality whose reach covers the point best (closest relative to its reach). */
function localityAt(index: PlacesIndex, at: LatLng): IndexedPlace | undefined {
  const box = deg(LOCALITY_REACH_M.city!, at.lat);
  let best: number | undefined;
  let bestRatio = 1;
  for (const id of index.localitiesNear(at.lat, at.lng, box.dLat, box.dLng)) {
    const ratio =
      haversineMeters(at, { lat: index.lat[id]!, lng: index.lng[id]! }) / (LOCALITY_REACH_M[index.kindOf(id)] ?? 1500);
    if (ratio < bestRatio) [best, bestRatio] = [id, ratio];
  }
  return best === undefined ? undefined : index.byIds([best])[0];
}

/**
 * Reverse geocoding, most precise first: the nearest address point, then a POI or street, then the locality the point
 * lies in (`approximate`), else nothing (`no_address`, e.g. open sea or desert).
 */
export function reverse(index: PlacesIndex, at: LatLng, locale: Locale): ReverseHit {
  const near = deg(STREET_M, at.lat);
  const address = nearest(at, index.near(at.lat, at.lng, near.dLat, near.dLng, ['address']), ADDRESS_M);
  if (address) return { formatted_address: formattedAddress(address, locale), place_id: address.cid, source: 'fresh' };

  const locality = localityAt(index, at);
  const localityName = locality
    ? joinAddress([displayName(locality, locale), locale === 'ar' ? locality.context_ar : locality.context_en], locale)
    : '';
  const poi = nearest(at, index.near(at.lat, at.lng, near.dLat, near.dLng, ['poi']), POI_M);
  if (poi) {
    return {
      formatted_address: joinAddress([displayName(poi, locale), streetLine(poi), localityName], locale),
      place_id: poi.cid,
      source: 'fresh',
    };
  }
  let street: { id: number; d: number } | undefined;
  for (const s of index.segmentsNear(at.lat, at.lng, near.dLat, near.dLng)) {
    const d = segmentDistance(at, s);
    if (d <= STREET_M && (!street || d < street.d)) street = { id: s.place_id, d };
  }
  const streetRow = street && index.byIds([street.id])[0];
  if (streetRow)
    return {
      formatted_address: joinAddress([displayName(streetRow, locale), localityName], locale),
      place_id: streetRow.cid,
      source: 'fresh',
    };
  if (locality) return { formatted_address: localityName, place_id: locality.cid, source: 'approximate' };
  return { formatted_address: '', source: 'no_address' };
}
