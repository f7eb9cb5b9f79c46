import type { RoadGraph } from './graph.js';

/** A point snapped onto a road segment: the projected point, its fraction t along a->b, and the distance to it. */
export interface Snap {
  seg: number;
  t: number;
  lat: number;
  lon: number;
  meters: number;
}

const M_PER_DEG_LAT = 110_574;
const M_PER_DEG_LON_EQ = 111_320;

/**
 * Nearest segment within `maxMeters`, searched ring by ring in the grid (stops once the ring is farther than the
 * best hit). Segments of tiny components (car-park islands) are used only when no real road is in range, so a
 * point next to a car park still routes from the street network. A segment in several cells is measured again in
 * each (cheaper than remembering it): the same distance never displaces the first hit.
 */
export function snapPoint(g: RoadGraph, lat: number, lon: number, maxMeters: number): Snap | undefined {
  const { minLat, minLon, cell, rows, cols } = g.meta.grid;
  const kx = M_PER_DEG_LON_EQ * Math.cos((lat * Math.PI) / 180);
  const ky = M_PER_DEG_LAT;
  const cellM = cell * Math.min(kx, ky);
  const r0 = Math.floor((lat - minLat) / cell),
    c0 = Math.floor((lon - minLon) / cell);
  const maxRing = Math.ceil(maxMeters / cellM) + 1;
  let best = -1,
    bestM = Infinity,
    tiny = -1,
    tinyM = Infinity;
  for (let ring = 0; ring <= maxRing; ring++) {
    // Points in ring k are at least (k-1) cells away: stop when that already exceeds the best real-road hit.
    if (best >= 0 && (ring - 1) * cellM > bestM) break;
    for (let r = r0 - ring; r <= r0 + ring; r++) {
      if (r < 0 || r >= rows) continue;
      for (let c = c0 - ring; c <= c0 + ring; c++) {
        if (c < 0 || c >= cols) continue;
        if (Math.max(Math.abs(r - r0), Math.abs(c - c0)) !== ring) continue; // only the ring's border
        const cellId = r * cols + c;
        for (let i = g.cellFirst[cellId]!; i < g.cellFirst[cellId + 1]!; i++) {
          const s = g.cellSeg[i]!;
          const m = measure(g, s, lat, lon, kx, ky, undefined);
          if (m > maxMeters) continue;
          if (!g.segTiny[s]) {
            if (m < bestM) {
              best = s;
              bestM = m;
            }
          } else if (m < tinyM) {
            tiny = s;
            tinyM = m;
          }
        }
      }
    }
  }
  const s = best >= 0 ? best : tiny;
  if (s < 0) return undefined;
  const snap: Snap = { seg: s, t: 0, lat: 0, lon: 0, meters: 0 };
  measure(g, s, lat, lon, kx, ky, snap);
  return snap;
}

/**
 * The distance in metres from the point to segment s, projected in a local equirectangular frame (exact enough below
 * a few km); with `into`, the projection too.
 */
function measure(g: RoadGraph, s: number, lat: number, lon: number, kx: number, ky: number, into?: Snap): number {
  const a = g.segA[s]!,
    b = g.segB[s]!;
  const ax = (g.lon[a]! - lon) * kx,
    ay = (g.lat[a]! - lat) * ky;
  const bx = (g.lon[b]! - lon) * kx,
    by = (g.lat[b]! - lat) * ky;
  const dx = bx - ax,
    dy = by - ay;
  const len2 = dx * dx + dy * dy;
  const t = len2 > 0 ? Math.min(1, Math.max(0, -(ax * dx + ay * dy) / len2)) : 0;
  const meters = Math.hypot(ax + t * dx, ay + t * dy);
  if (into) {
    into.t = t;
    into.lat = g.lat[a]! + t * (g.lat[b]! - g.lat[a]!);
    into.lon = g.lon[a]! + t * (g.lon[b]! - g.lon[a]!);
    into.meters = meters;
  }
  return meters;
}
