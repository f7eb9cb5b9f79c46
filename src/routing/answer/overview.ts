import type { RoadGraph } from '../road-graph.js';
import { linePoints, type RoutePath } from '../query/path.js';

/**
 * The route line an answer carries (directions `overview`, as OSRM and Mapbox name it). `full` is every point of
 * the road geometry; `simplified` (the default) keeps the points that show when the whole route fills a map
 * 1024 pixels across: no dropped point lies farther than half a pixel of that map from the line kept. A local
 * route keeps nearly every point (its half pixel is a metre or two); a cross-country one of 10^4 points keeps a
 * few hundred, so its answer is tens of KB instead of a megabyte, on a field link as on the server.
 */
export type Overview = 'full' | 'simplified';
export const OVERVIEWS: readonly Overview[] = ['simplified', 'full'];
export const DEFAULT_OVERVIEW: Overview = 'simplified';

/** The largest deviation allowed, as a share of the route's extent: half a pixel of 1024. */
const EXTENT_SHARE = 1 / 2048;

/**
 * Scratch for the radial pass's candidates (their indices, and their coordinates on the flat map, side by side so
 * the splitting pass reads them in order), their kept marks and the split stack, grown to the longest line so far
 * (one line at a time a thread).
 */
let candidates = new Uint32Array(1 << 14);
let candXY = new Float64Array(1 << 15);
let keptMark = new Uint8Array(1 << 14);
let stack = new Uint32Array(1 << 15);

/** The flat scale of a line's longitudes (cos of its middle latitude) and its extent on that map, in degrees. */
function extentOf(pts: Float64Array, count: number): { c: number; extent: number } {
  let minX = Infinity,
    maxX = -Infinity,
    minY = Infinity,
    maxY = -Infinity;
  for (let i = 0; i < count; i++) {
    const x = pts[2 * i]!,
      y = pts[2 * i + 1]!;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  const c = Math.cos((((minY + maxY) / 2) * Math.PI) / 180);
  return { c, extent: Math.max((maxX - minX) * c, maxY - minY) };
}

/**
 * The indices, in order, of the points of a line (`pts` = [lng0, lat0, lng1, lat1, ...], `count` points) that its
 * simplified overview keeps, always the first and the last. Distances are measured flat, longitudes scaled by the
 * cosine of the line's middle latitude (what a map of its extent shows, to a few percent over a country). Two
 * passes of half the allowed deviation each (a quarter pixel), so the bound holds for their sum (see simplify).
 */
export function overviewIndices(pts: Float64Array, count: number): Uint32Array {
  if (count <= 2) return Uint32Array.from({ length: count }, (_, i) => i);
  const { c, extent } = extentOf(pts, count);
  return simplify(pts, count, c, (extent * EXTENT_SHARE) / 2);
}

/**
 * The points of route p's line that the overview asked for, and which of them it keeps (all when `keep` is
 * undefined). `full`: every point. `simplified`: a chain whose inner points (route-summary.ts cDev) all lie within a
 * third of the allowed deviation of its chord keeps only its ends, and simplify() keeps a third each for its two
 * passes over the rest. The bound holds for the sum: consecutive points left after the chains' share both lie
 * within the passes' two thirds of one segment kept (the one spanning them), so every point of the chord between
 * them does too (the distance to a segment is convex), and a chain's inner points lie within a third of that chord.
 * The extent is measured on the pieces' ends, at most the whole line's, so the bound is the whole line's or
 * tighter; the chains' deviation is measured with longitudes unscaled, which no flat map makes larger.
 */
export function routeLine(
  g: RoadGraph,
  p: RoutePath,
  overview: Overview,
): { pts: Float64Array; count: number; keep?: Uint32Array } {
  if (overview === 'full') return linePoints(g, p, -1);
  const { c, extent } = extentOf(p.pts, p.n + 1);
  const share = (extent * EXTENT_SHARE) / 3;
  const line = linePoints(g, p, share);
  if (line.count <= 2) return line;
  return { ...line, keep: simplify(line.pts, line.count, c, share) };
}

/**
 * simplify() keeps, of `count` points, the first, the last and enough between them that none dropped lies farther
 * than 2 x `tol` from the segment kept that spans it, measured flat (longitudes times `c`). Points within `tol` of
 * the last point kept go first (one linear pass, which leaves a long route a fraction of its points), then
 * Douglas-Peucker over the rest, splitting at the farthest point from each chord until none is farther than `tol`.
 */
function simplify(pts: Float64Array, count: number, c: number, tol: number): Uint32Array {
  const tol2 = tol * tol;
  // pass 1: radial
  if (candidates.length < count) {
    candidates = new Uint32Array(Math.max(count, 2 * candidates.length));
    candXY = new Float64Array(2 * candidates.length);
  }
  const cand = candidates,
    xy = candXY;
  let m = 0;
  const add = (i: number, x: number, y: number) => {
    cand[m] = i;
    xy[2 * m] = x;
    xy[2 * m + 1] = y;
    m++;
  };
  let lx = pts[0]! * c,
    ly = pts[1]!;
  add(0, lx, ly);
  for (let i = 1; i < count - 1; i++) {
    const x = pts[2 * i]! * c,
      y = pts[2 * i + 1]!;
    if ((x - lx) * (x - lx) + (y - ly) * (y - ly) > tol2) {
      add(i, x, y);
      lx = x;
      ly = y;
    }
  }
  add(count - 1, pts[2 * (count - 1)]! * c, pts[2 * (count - 1) + 1]!);
  // pass 2: Douglas-Peucker over the candidates, iteratively (a stack of [first, last] candidate positions)
  if (keptMark.length < m) keptMark = new Uint8Array(Math.max(m, 2 * keptMark.length));
  if (stack.length < 2 * m) stack = new Uint32Array(Math.max(2 * m, 2 * stack.length));
  const mark = keptMark;
  mark.fill(0, 0, m);
  mark[0] = mark[m - 1] = 1;
  let kept = 2,
    top = 0;
  stack[top++] = 0;
  stack[top++] = m - 1;
  while (top > 0) {
    const last = stack[--top]!,
      first = stack[--top]!;
    const ax = xy[2 * first]!,
      ay = xy[2 * first + 1]!,
      dx = xy[2 * last]! - ax,
      dy = xy[2 * last + 1]! - ay,
      l2 = dx * dx + dy * dy || 1; // (a chord of no length: plain distances to its point)
    // Squared distances to the chord as a segment (a line may double back past its ends), times l2: beside the
    // chord that is the cross product squared, so the loop has no division (it runs ~14 times per candidate).
    let far = -1,
      farD = tol2 * l2;
    for (let k = first + 1; k < last; k++) {
      const px = xy[2 * k]! - ax,
        py = xy[2 * k + 1]! - ay,
        dot = px * dx + py * dy;
      let d: number;
      if (dot <= 0) d = (px * px + py * py) * l2;
      else if (dot >= l2) d = ((px - dx) * (px - dx) + (py - dy) * (py - dy)) * l2;
      else {
        const cross = px * dy - py * dx;
        d = cross * cross;
      }
      if (d > farD) {
        farD = d;
        far = k;
      }
    }
    if (far < 0) continue;
    mark[far] = 1;
    kept++;
    stack[top++] = first;
    stack[top++] = far;
    stack[top++] = far;
    stack[top++] = last;
  }
  const out = new Uint32Array(kept);
  for (let k = 0, j = 0; k < m; k++) if (mark[k]) out[j++] = cand[k]!;
  return out;
}

/** An upstream engine's coordinates `[[lng, lat], ...]` as the JSON text of the overview asked for. */
export function overviewLine(coords: number[][], overview: Overview): string {
  if (overview === 'full' || coords.length <= 2) return JSON.stringify(coords);
  const flat = new Float64Array(2 * coords.length);
  coords.forEach(([x, y], i) => {
    flat[2 * i] = x!;
    flat[2 * i + 1] = y!;
  });
  return JSON.stringify(Array.from(overviewIndices(flat, coords.length), (i) => coords[i]));
}
