import type { Box } from '../../render/mercator.js';
import type { Chain } from './rings.js';

/**
 * Land polygons from OSM coastlines inside an extract's box. Closed chains are islands. Open chains cross the box
 * edge (or stop where the extract cut them): each end is carried straight to the nearest edge, then rings are closed
 * by walking the box perimeter from one chain's end to the next chain's start, turning so that land stays on the
 * left of the coastline, as OSM orients it. Works in normalised Mercator (y grows south), where a ring with land on
 * the left runs anticlockwise on screen, so the perimeter is walked anticlockwise too.
 */
export function coastLand(chains: Chain[], box: Box): Float64Array[] {
  const rings: Float64Array[] = chains.filter((c) => c.closed).map((c) => c.coords);
  const open = chains.filter((c) => !c.closed && c.coords.length >= 4);
  if (!open.length) return rings;
  const [x0, y0, x1, y1] = box;
  const w = x1 - x0;
  const h = y1 - y0;
  // Perimeter parameter, increasing clockwise on screen: top edge left->right, right edge down, bottom right->left, left up.
  const snap = (x: number, y: number): { t: number; x: number; y: number } => {
    const d = [y - y0, x1 - x, y1 - y, x - x0];
    const side = d.indexOf(Math.min(...d));
    if (side === 0) return { t: (x - x0) / w, x, y: y0 };
    if (side === 1) return { t: 1 + (y - y0) / h, x: x1, y };
    if (side === 2) return { t: 2 + (x1 - x) / w, x, y: y1 };
    return { t: 3 + (y1 - y) / h, x: x0, y };
  };
  const corners = [
    { t: 1, x: x1, y: y0 },
    { t: 2, x: x1, y: y1 },
    { t: 3, x: x0, y: y1 },
    { t: 4, x: x0, y: y0 },
  ];
  const ends = open.map((c) => {
    const n = c.coords.length;
    return { chain: c, start: snap(c.coords[0]!, c.coords[1]!), end: snap(c.coords[n - 2]!, c.coords[n - 1]!) };
  });
  const used = new Set<number>();
  for (let i = 0; i < ends.length; i++) {
    if (used.has(i)) continue;
    const pts: number[] = [];
    let cur = i;
    for (let guard = 0; guard <= ends.length; guard++) {
      used.add(cur);
      const e = ends[cur]!;
      pts.push(e.start.x, e.start.y, ...e.chain.coords, e.end.x, e.end.y);
      // Next start anticlockwise from this end (possibly this chain's own start, which closes the ring).
      let best = -1;
      let bestD = Infinity;
      ends.forEach((o, j) => {
        const d = (e.end.t - o.start.t + 4) % 4;
        if ((j === i || !used.has(j)) && d < bestD) [best, bestD] = [j, d];
      });
      const passed = corners
        .flatMap((c) => [{ ...c, t: c.t - 4 }, { ...c }, { ...c, t: c.t + 4 }])
        .filter((c) => c.t < e.end.t && c.t > e.end.t - bestD);
      for (const c of passed.sort((a, b) => b.t - a.t)) pts.push(c.x, c.y);
      if (best === i || best < 0) break;
      cur = best;
    }
    rings.push(Float64Array.from(pts));
  }
  return rings;
}
