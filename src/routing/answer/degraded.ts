import { haversineMeters, type LatLng } from '../../core/geo.js';

/** Spec: straight-line fallback at 4 m/s, never under 30 s. */
const STRAIGHT_SPEED_MPS = 4;

export function straightLine(a: LatLng, b: LatLng) {
  const distance = haversineMeters(a, b);
  return {
    coordinates: [
      [a.lng, a.lat],
      [b.lng, b.lat],
    ] as Array<[number, number]>,
    distance_meters: Math.round(distance),
    duration_seconds: Math.max(30, Math.round(distance / STRAIGHT_SPEED_MPS)),
  };
}
