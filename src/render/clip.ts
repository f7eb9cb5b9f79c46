import type { Box } from './mercator.js';

/**
 * Sutherland-Hodgman clipping of a closed ring against a rectangle. Pieces of big Natural Earth polygons (Eurasia's
 * 10m outline has 80k points) are clipped once per grid cell and cached, so a street-zoom tile traces a few hundred
 * points instead of a continent. Each ring is clipped on its own; with even-odd filling holes stay holes.
 */
export function clipRing(r: Float64Array, b: Box): Float64Array | undefined {
  let pts = Array.from(r);
  const edges: Array<
    [(x: number, y: number) => boolean, (ax: number, ay: number, bx: number, by: number) => [number, number]]
  > = [
    [(x) => x >= b[0], (ax, ay, bx, by) => [b[0], ay + ((by - ay) * (b[0] - ax)) / (bx - ax)]],
    [(x) => x <= b[2], (ax, ay, bx, by) => [b[2], ay + ((by - ay) * (b[2] - ax)) / (bx - ax)]],
    [(_, y) => y >= b[1], (ax, ay, bx, by) => [ax + ((bx - ax) * (b[1] - ay)) / (by - ay), b[1]]],
    [(_, y) => y <= b[3], (ax, ay, bx, by) => [ax + ((bx - ax) * (b[3] - ay)) / (by - ay), b[3]]],
  ];
  for (const [inside, cut] of edges) {
    const out: number[] = [];
    const n = pts.length;
    if (n < 6) return undefined;
    for (let i = 0; i < n; i += 2) {
      const ax = pts[(i - 2 + n) % n]!,
        ay = pts[(i - 1 + n) % n]!,
        bx = pts[i]!,
        by = pts[i + 1]!;
      const ain = inside(ax, ay);
      const bin = inside(bx, by);
      if (bin) {
        if (!ain) out.push(...cut(ax, ay, bx, by));
        out.push(bx, by);
      } else if (ain) out.push(...cut(ax, ay, bx, by));
    }
    pts = out;
  }
  return pts.length >= 6 ? Float64Array.from(pts) : undefined;
}
