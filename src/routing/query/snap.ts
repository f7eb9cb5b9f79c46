import type { RoadGraph } from '../road-graph.js';

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
 * point next to a car park still routes from the street network. A segment is listed in every cell its bounding
 * box touches, so its nearest point lies in a cell it is listed in: a cell farther from the point than the best
 * hit so far (or than `maxMeters`) holds nothing nearer and is not read. At 600 copies that leaves most of a ring's
 * eight neighbours unread, and snapping took a tenth of a local route. A segment in several cells is measured again
 * in each (cheaper than remembering it): the same distance never displaces the first hit. Distances are compared
 * squared.
 */
export function snapPoint(g: RoadGraph, lat: number, lon: number, maxMeters: number): Snap | undefined {
  const { minLat, minLon, cell, rows, cols } = g.meta.grid;
  const kx = M_PER_DEG_LON_EQ * Math.cos((lat * Math.PI) / 180);
  const ky = M_PER_DEG_LAT;
  const cellM = cell * Math.min(kx, ky);
  const y = (lat - minLat) / cell,
    x = (lon - minLon) / cell;
  const r0 = Math.floor(y),
    c0 = Math.floor(x);
  // where the point lies inside its cell, in metres from the cell's south and west sides, and the cell's sides
  const cy = cell * ky,
    cx = cell * kx,
    inY = (y - r0) * cy,
    inX = (x - c0) * cx;
  const maxRing = Math.ceil(maxMeters / cellM) + 1;
  const max2 = maxMeters * maxMeters;
  let best = -1,
    best2 = Infinity,
    tiny = -1,
    tiny2 = Infinity;
  for (let ring = 0; ring <= maxRing; ring++) {
    // Points in ring k are at least (k-1) cells away: stop when that already exceeds the best real-road hit.
    const ringGap = (ring - 1) * cellM;
    if (best >= 0 && ringGap > 0 && ringGap * ringGap > best2) break;
    const bound2 = best >= 0 ? best2 : max2;
    for (let r = r0 - ring; r <= r0 + ring; r++) {
      if (r < 0 || r >= rows) continue;
      const gy = r < r0 ? (r0 - r - 1) * cy + inY : r > r0 ? (r - r0) * cy - inY : 0;
      for (let c = c0 - ring; c <= c0 + ring; c++) {
        if (c < 0 || c >= cols) continue;
        if (Math.max(Math.abs(r - r0), Math.abs(c - c0)) !== ring) continue; // only the ring's border
        const gx = c < c0 ? (c0 - c - 1) * cx + inX : c > c0 ? (c - c0) * cx - inX : 0;
        if (gx * gx + gy * gy > bound2) continue;
        const cellId = r * cols + c;
        for (let i = g.cellFirst[cellId]!; i < g.cellFirst[cellId + 1]!; i++) {
          const s = g.cellSeg[i]!;
          const d2 = measure(g, s, lat, lon, kx, ky, undefined);
          if (d2 > max2) continue;
          if (!g.segTiny[s]) {
            if (d2 < best2) {
              best = s;
              best2 = d2;
            }
          } else if (d2 < tiny2) {
            tiny = s;
            tiny2 = d2;
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
 * The squared distance in metres from the point to segment s, projected in a local equirectangular frame (exact
 * enough below a few km); with `into`, the projection and the distance too.
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
  // a node is measured from its own coordinates whichever segment ends there, so the segments meeting at the
  // nearest node tie exactly (the first one read keeps it) rather than by rounding
  const ex = t === 1 ? bx : ax + t * dx,
    ey = t === 1 ? by : ay + t * dy;
  const d2 = ex * ex + ey * ey;
  if (into) {
    into.t = t;
    into.lat = g.lat[a]! + t * (g.lat[b]! - g.lat[a]!);
    into.lon = g.lon[a]! + t * (g.lon[b]! - g.lon[a]!);
    into.meters = Math.sqrt(d2);
  }
  return d2;
}
