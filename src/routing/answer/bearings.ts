/** Bearings for maneuvers, along a route (maneuvers.ts) and at every turn at import (junction.ts, route-summary.ts). */

export const TO_RAD = Math.PI / 180;

/**
 * bearingOf with the start's cos(lat1) and sin(lat1) given (in radians, as bearingOf computes them): the same
 * operations in the same order, so the same result to the bit.
 */
export function bearingFrom(cosLat1: number, sinLat1: number, lng1: number, lng2: number, lat2: number): number {
  const cosLat2 = Math.cos(lat2 * TO_RAD);
  const y = Math.sin((lng2 - lng1) * TO_RAD) * cosLat2;
  const x = cosLat1 * Math.sin(lat2 * TO_RAD) - sinLat1 * cosLat2 * Math.cos((lng2 - lng1) * TO_RAD);
  return (Math.atan2(y, x) / TO_RAD + 360) % 360;
}

/** Initial bearing from (lng1, lat1) to (lng2, lat2), degrees clockwise from north. */
export function bearingOf(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const toRad = Math.PI / 180;
  const y = Math.sin((lng2 - lng1) * toRad) * Math.cos(lat2 * toRad);
  const x =
    Math.cos(lat1 * toRad) * Math.sin(lat2 * toRad) -
    Math.sin(lat1 * toRad) * Math.cos(lat2 * toRad) * Math.cos((lng2 - lng1) * toRad);
  return (Math.atan2(y, x) / toRad + 360) % 360;
}

/**
 * Whether the road from (x0, y0) through the junction (x1, y1) on to (x2, y2) turns by under 15 degrees, measured
 * flat (longitudes scaled by the junction's cos(latitude)). Within a road edge's length that differs from the
 * spherical bearings by well under a degree, so every junction it passes is one the exact test (turn under 20
 * degrees, same name) would pass too; the others get the exact test.
 */
export function surelyStraight(x0: number, y0: number, x1: number, y1: number, x2: number, y2: number): boolean {
  const c = Math.cos(y1 * TO_RAD);
  const ax = (x1 - x0) * c,
    ay = y1 - y0,
    bx = (x2 - x1) * c,
    by = y2 - y1;
  const dot = ax * bx + ay * by;
  return dot > 0 && Math.abs(ax * by - ay * bx) < TAN_15 * dot;
}
const TAN_15 = Math.tan((15 * Math.PI) / 180);
