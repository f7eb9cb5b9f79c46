import { AppError } from '../core/errors.js';
import { haversineMeters, isLat, isLng, type LatLng } from '../core/geo.js';
import { invalid, optionalBool, requiredCoord } from '../core/fields.js';
import { DEFAULT_OVERVIEW, OVERVIEWS, type Overview } from './answer/overview.js';
import type { DirectionsRequest } from './types.js';

const MAX_WAYPOINTS = 4;
/** Origin and destination closer than this are "the same point" (SAME_POINT). */
const SAME_POINT_METERS = 5;

function waypoint(v: unknown): LatLng {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AppError('BAD_WAYPOINT');
  const { lat, lng } = v as Record<string, unknown>;
  if (!isLat(lat) || !isLng(lng) || (lat === 0 && lng === 0)) throw new AppError('BAD_WAYPOINT');
  return { lat, lng };
}

/** Directions and prefetch share one validation, in the spec's order of checks. */
export function parseDirections(body: Record<string, unknown>, locale: 'en' | 'ar'): DirectionsRequest {
  const origin = { lat: requiredCoord(body, 'origin_lat', 'lat'), lng: requiredCoord(body, 'origin_lng', 'lng') };
  const dest = { lat: requiredCoord(body, 'dest_lat', 'lat'), lng: requiredCoord(body, 'dest_lng', 'lng') };
  const coarseOrigin = optionalBool(body, 'coarse_origin');
  if (optionalBool(body, 'enrich_maneuvers')) throw new AppError('ENRICH_MANEUVERS_UNSUPPORTED');
  const raw = body.waypoints ?? [];
  if (!Array.isArray(raw)) throw invalid('waypoints', 'must be an array of {lat, lng}');
  if (raw.length > MAX_WAYPOINTS) throw new AppError('TOO_MANY_WAYPOINTS');
  const waypoints = raw.map(waypoint);
  if (!waypoints.length && haversineMeters(origin, dest) < SAME_POINT_METERS) throw new AppError('SAME_POINT');
  let maxWaitMs: number | undefined;
  const mw = body.max_wait_ms;
  if (mw !== undefined && mw !== null) {
    if (typeof mw !== 'number' || !Number.isFinite(mw)) throw invalid('max_wait_ms', 'must be a number');
    if (mw > 0 && mw < 30_000) maxWaitMs = mw; // spec: honoured only inside (0, 30000)
  }
  const bodyLocale = body.locale === 'ar' || body.locale === 'en' ? body.locale : locale;
  return { origin, dest, waypoints, coarseOrigin, maxWaitMs, locale: bodyLocale, overview: overviewOf(body) };
}

/** `overview`: absent or null is the default; anything but one of the names is a validation error. */
function overviewOf(body: Record<string, unknown>): Overview {
  const v = body.overview;
  if (v === undefined || v === null) return DEFAULT_OVERVIEW;
  if (!OVERVIEWS.includes(v as Overview)) throw invalid('overview', `must be one of ${OVERVIEWS.join(', ')}`);
  return v as Overview;
}
