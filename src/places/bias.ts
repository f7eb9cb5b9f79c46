import type { LatLng } from '../core/geo.js';

/** Fallback bias centres by caller country (spec): QA Doha, SA Riyadh, AE Dubai, EG Cairo, anything else Amman. */
const CENTRES: Record<string, LatLng> = {
  qa: { lat: 25.2854, lng: 51.531 },
  sa: { lat: 24.7136, lng: 46.6753 },
  ae: { lat: 25.2048, lng: 55.2708 },
  eg: { lat: 30.0444, lng: 31.2357 },
  jo: { lat: 31.9539, lng: 35.9106 },
};

export const DEFAULT_COUNTRY = 'jo';

export const fallbackCentre = (country: string): LatLng => CENTRES[country] ?? CENTRES[DEFAULT_COUNTRY]!;

export const isCountryCode = (v: string | null | undefined): v is string => !!v && /^[a-z]{2}$/i.test(v);
