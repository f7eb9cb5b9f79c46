import { describe, expect, it } from 'vitest';
import { overviewIndices, overviewLine } from '../../src/routing/answer/overview.js';

/** Flat distance (degrees of latitude) from point i to the segment between points a and b, longitudes scaled by c. */
function toSegment(pts: Float64Array, i: number, a: number, b: number, c: number): number {
  const ax = pts[2 * a]! * c,
    ay = pts[2 * a + 1]!,
    dx = pts[2 * b]! * c - ax,
    dy = pts[2 * b + 1]! - ay,
    px = pts[2 * i]! * c - ax,
    py = pts[2 * i + 1]! - ay,
    l2 = dx * dx + dy * dy;
  const t = l2 ? Math.min(1, Math.max(0, (px * dx + py * dy) / l2)) : 0;
  return Math.hypot(px - t * dx, py - t * dy);
}

/** Every dropped point lies within half a pixel of 1024 (of the line's extent) of the kept segment over it. */
function checkBound(pts: Float64Array, count: number, keep: Uint32Array) {
  let minX = Infinity,
    maxX = -Infinity,
    minY = Infinity,
    maxY = -Infinity;
  for (let i = 0; i < count; i++) {
    minX = Math.min(minX, pts[2 * i]!);
    maxX = Math.max(maxX, pts[2 * i]!);
    minY = Math.min(minY, pts[2 * i + 1]!);
    maxY = Math.max(maxY, pts[2 * i + 1]!);
  }
  const c = Math.cos((((minY + maxY) / 2) * Math.PI) / 180);
  const tol = Math.max((maxX - minX) * c, maxY - minY) / 2048;
  expect(keep[0]).toBe(0);
  expect(keep[keep.length - 1]).toBe(count - 1);
  let worst = 0;
  for (let k = 0; k + 1 < keep.length; k++) {
    expect(keep[k + 1]!).toBeGreaterThan(keep[k]!);
    for (let i = keep[k]! + 1; i < keep[k + 1]!; i++)
      worst = Math.max(worst, toSegment(pts, i, keep[k]!, keep[k + 1]!, c));
  }
  expect(worst).toBeLessThanOrEqual(tol * (1 + 1e-9));
  return { tol, worst };
}

describe('the simplified overview of a route line', () => {
  it('keeps a few hundred of a cross-country line of 20,000 points, none dropped beyond half a pixel', () => {
    // 900 km east across the region with bends every ~30 km and metre-scale wobble between OSM nodes
    const n = 20_000;
    const pts = new Float64Array(2 * n);
    let seed = 9;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < n; i++) {
      const f = i / (n - 1);
      pts[2 * i] = 31 + 9 * f + (rnd() - 0.5) * 2e-5;
      pts[2 * i + 1] = 30 + 0.3 * Math.sin(f * 30) + 0.05 * Math.sin(f * 400) + (rnd() - 0.5) * 2e-5;
    }
    const keep = overviewIndices(pts, n);
    expect(keep.length).toBeLessThan(n / 20);
    expect(keep.length).toBeGreaterThan(30); // the bends are kept
    const { worst, tol } = checkBound(pts, n, keep);
    expect(worst).toBeGreaterThan(tol / 4); // it did simplify up to its bound, not far short of it
  });

  it('keeps the far end of a road driven out and back (distance to the chord as a segment)', () => {
    // east 100 km, then back west 60 km: the turning point lies on the line through the ends, but off the segment
    const lng = [35, 35.5, 36, 35.8, 35.6, 35.4];
    const pts = new Float64Array(lng.flatMap((x) => [x, 31]));
    const keep = overviewIndices(pts, lng.length);
    expect(Array.from(keep)).toEqual([0, 2, 5]);
    checkBound(pts, lng.length, keep);
  });

  it('lines of up to two points, and of one place repeated, keep their ends', () => {
    expect(Array.from(overviewIndices(new Float64Array(0), 0))).toEqual([]);
    expect(Array.from(overviewIndices(new Float64Array([35, 31]), 1))).toEqual([0]);
    expect(Array.from(overviewIndices(new Float64Array([35, 31, 35.1, 31]), 2))).toEqual([0, 1]);
    expect(Array.from(overviewIndices(new Float64Array([35, 31, 35, 31, 35, 31, 35, 31]), 4))).toEqual([0, 3]);
  });

  it('an upstream line: full is the line as given, simplified the kept points of it', () => {
    const coords = [
      [35, 31],
      [35.0001, 31.00000001],
      [35.2, 31],
      [35.2, 31.3],
    ];
    expect(overviewLine(coords, 'full')).toBe(JSON.stringify(coords));
    expect(JSON.parse(overviewLine(coords, 'simplified'))).toEqual([coords[0], coords[2], coords[3]]);
  });
});
