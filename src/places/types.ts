import type { LatLng } from '../core/geo.js';

export type Locale = 'en' | 'ar';
type OwnershipTier = 'seed' | 'enriched' | 'verified' | 'owned';

export interface Prediction {
  place_id: string;
  name: string;
  address: string;
  distance_meters?: number;
  lat?: number;
  lng?: number;
  ownership_tier: OwnershipTier;
  driver_verifications: number;
}

export interface AutocompleteRequest {
  q: string;
  bias: LatLng;
  /** The caller sent lat/lng (else the bias is a fallback city centre and distances are not reported). */
  biasGiven: boolean;
  country: string;
  locale: Locale;
  maxWaitMs: number;
  /** The requester's signal (client gone, whole-request timeout): a search nobody waits for is dropped. */
  signal?: AbortSignal;
}

/** `miss` tells metering whether a live gather ran (daily quotas count misses only). */
export interface AutocompleteAnswer {
  predictions: Prediction[];
  source: string;
  budget_expired: boolean;
  miss: boolean;
}

interface GeocodeAnswer {
  matched: boolean;
  formatted_address?: string;
  place_id?: string;
  name?: string;
  lat?: number;
  lng?: number;
  source?: 'svc_place_details' | 'svc_autocomplete';
  miss: boolean;
}

interface ReverseAnswer {
  formatted_address: string;
  place_id?: string;
  source: string;
  miss: boolean;
}

export interface PlaceRecord {
  place_id: string;
  cid?: string;
  name: string;
  name_localized?: { en?: string; ar?: string };
  address: string;
  lat: number;
  lng: number;
  phone?: string;
  website?: string;
  category?: string;
  hours?: string;
  rating?: number;
  rating_count?: number;
  photos?: string[];
  ownership_tier: OwnershipTier;
  driver_verifications: number;
}

export interface PlaceLookup {
  id: string;
  cacheOnly: boolean;
  hintLat?: number;
  hintLng?: number;
  hintName?: string;
  locale: Locale;
}

interface PhotosAnswer {
  place_id: string;
  photos: string[];
}

/** The places capability as the HTTP layer sees it; engines implement it over their indexes. */
export interface PlacesService {
  autocomplete(r: AutocompleteRequest): Promise<AutocompleteAnswer>;
  geocode(address: string, locale: Locale, bias: LatLng): Promise<GeocodeAnswer>;
  reverse(at: LatLng, locale: Locale): Promise<ReverseAnswer>;
  place(lookup: PlaceLookup): Promise<PlaceRecord & { miss: boolean }>;
  photos(at: LatLng): Promise<PhotosAnswer>;
}
