/**
 * Synthetic W x W grid (4-neighbour, two-way, random speeds 20-100 km/h, 100 m edges), contracted by the same
 * code as the road import, in its own process so the peak RSS is its own. Compares CH queries with plain
 * bidirectional Dijkstra on the same uncontracted graph. usage: routing-grid.ts <W>; prints one JSON line.
 */
import { buildCH } from '../src/routing/build/ch-build.js';
import { CHQuery } from '../src/routing/query/ch-query.js';
import { BidiDijkstra } from '../src/routing/query/dijkstra.js';
import { pct, prng } from './routing-stats.js';

const W = Number(process.argv[2] ?? 1000),
  n = W * W;
const rnd = prng(3);
const first = new Uint32Array(n + 1),
  head = new Uint32Array(4 * n),
  ms = new Uint32Array(4 * n);
let m = 0;
for (let u = 0; u < n; u++) {
  const r = Math.floor(u / W),
    c = u % W;
  for (const v of [c + 1 < W ? u + 1 : -1, c > 0 ? u - 1 : -1, r + 1 < W ? u + W : -1, r > 0 ? u - W : -1]) {
    if (v < 0) continue;
    head[m] = v;
    ms[m] = Math.round((100 / ((20 + rnd() * 80) / 3.6)) * 1000);
    m++;
  }
  first[u + 1] = m;
}
const g = { n, first, head: head.subarray(0, m), ms: ms.subarray(0, m) };
const t0 = performance.now();
const ch = buildCH(g, {
  progress: (d, total, deg) =>
    d % 100_000 === 0 &&
    process.stderr.write(
      `  grid CH ${d}/${total} core degree ${deg.toFixed(1)} ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
    ),
});
const buildS = (performance.now() - t0) / 1000;
const q = new CHQuery(ch, ch.coreNodes),
  d = new BidiDijkstra(g);
const pairs = Array.from({ length: 1000 }, () => [Math.floor(rnd() * n), Math.floor(rnd() * n)] as const);
const chMs: number[] = [],
  djMs: number[] = [];
let mismatches = 0;
pairs.forEach(([s, t], i) => {
  let t1 = performance.now();
  const a = q.run([[s, 0]], [[t, 0]])?.cost ?? Infinity;
  chMs.push(performance.now() - t1);
  if (i < 100) {
    t1 = performance.now();
    const b = d.run([[s, 0]], [[t, 0]]);
    djMs.push(performance.now() - t1);
    if (a !== b) mismatches++;
  }
});
process.stdout.write(
  JSON.stringify({
    nodes: n,
    edges: m,
    chEdges: ch.chHead.length,
    coreNodes: ch.coreNodes,
    buildS,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    chP50: pct(chMs, 50),
    chP99: pct(chMs, 99),
    dijkstraP50: pct(djMs, 50),
    dijkstraP99: pct(djMs, 99),
    mismatches,
    dijkstraQueries: djMs.length,
  }) + '\n',
);
