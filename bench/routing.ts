/**
 * Routing benchmark: import + contraction time and peak RSS (Monaco, Liechtenstein), query latency for 1,000
 * distinct routable pairs in-process and over HTTP (distinct pairs, so the route cache never answers), the CH
 * speed-up over plain bidirectional Dijkstra on the same graph, and a synthetic 1000 x 1000 grid.
 * Run: npm run bench:routing   (ROUTING_BENCH_GRID=<W> changes the grid side; 0 skips it)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { haversineMeters, type LatLng } from '../src/core/geo.js';
import { BuiltinEngine } from '../src/routing/builtin-engine.js';
import { CHQuery } from '../src/routing/query/ch-query.js';
import { BidiDijkstra } from '../src/routing/query/dijkstra.js';
import { GRAPH_FILE } from '../src/routing/graph.js';
import type { Seed } from '../src/routing/query/ch-query.js';
import { seedsOf, sourceSeeds, targetSeeds } from '../src/routing/query/chains.js';
import type { RoadGraph } from '../src/routing/road-graph.js';
import { segEdgeRange } from '../src/routing/query/path.js';
import { snapPoint, type Snap } from '../src/routing/query/snap.js';
import type { ReadyLine } from './lifecycle.js';
import { pct, prng, timeEach } from './routing-stats.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, '..', 'shared', 'fixtures');
const DATASETS = [
  ['monaco', 'monaco.osm.pbf'],
  ['liechtenstein', 'liechtenstein-2013-08-03.osm.pbf'],
] as const;
const PAIRS = 1000;
const GRID = Number(process.env.ROUTING_BENCH_GRID ?? 1000);
const TSX = ['--import', 'tsx'];

function child(script: string, args: string[]) {
  const r = spawnSync(process.execPath, [...TSX, join(ROOT, 'bench', script), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  if (r.status !== 0) throw new Error(`${script} failed with status ${r.status}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/** Distinct random routable pairs: points within ~60 m of road nodes, at least 300 m apart. */
function pairsFor(e: BuiltinEngine): Array<[LatLng, LatLng]> {
  const g = e.graph,
    rnd = prng(2026);
  const pt = () => {
    const v = g.segA[Math.floor(rnd() * g.segA.length)]!;
    return { lat: g.lat[v]! + (rnd() - 0.5) * 0.001, lng: g.lon[v]! + (rnd() - 0.5) * 0.001 };
  };
  const out: Array<[LatLng, LatLng]> = [];
  for (let tries = 0; out.length < PAIRS && tries < PAIRS * 20; tries++) {
    const a = pt(),
      b = pt();
    if (haversineMeters(a, b) >= 300 && e.paths(a, b, 0)) out.push([a, b]);
  }
  return out;
}

/**
 * The real server in its own process (bench/serve-app.ts: real config, store, meter, route cache), so client-side
 * fetch/JSON work and GC do not land in the server's latency; requests are sequential.
 */
async function http(dir: string, pairs: Array<[LatLng, LatLng]>) {
  const child = spawn(process.execPath, [...TSX, join(ROOT, 'bench', 'serve-app.ts'), dir], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((res, rej) => {
      createInterface({ input: child.stdout }).once('line', res);
      child.once('exit', (code) => rej(new Error(`serve-app exited early (${code})`)));
    });
    child.stdout.resume();
    const { port, apiKey } = JSON.parse(line) as ReadyLine;
    const url = `http://127.0.0.1:${port}/maps/v1/directions`;
    const post = (a: LatLng, b: LatLng) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey! },
        body: JSON.stringify({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng }),
      });
    for (let i = 0; i < 100; i++) await (await post(pairs[i]![1], pairs[i]![0])).arrayBuffer(); // warm-up: reversed pairs
    const ms: number[] = [],
      server: number[] = [];
    const sources: Record<string, number> = {};
    for (const [a, b] of pairs) {
      const t0 = performance.now();
      const res = await post(a, b);
      const j = (await res.json()) as { data?: { source?: string; served_in_ms?: number } };
      ms.push(performance.now() - t0);
      server.push(j.data?.served_in_ms ?? NaN);
      const src = j.data?.source ?? `status ${res.status}`;
      sources[src] = (sources[src] ?? 0) + 1;
    }
    return { p50: pct(ms, 50), p99: pct(ms, 99), serverP50: pct(server, 50), serverP99: pct(server, 99), sources };
  } finally {
    child.kill('SIGTERM');
  }
}

async function dataset(name: string, file: string) {
  const dir = mkdtempSync(join(tmpdir(), `svcmaps-bench-${name}-`));
  try {
    process.stderr.write(`${name}: import\n`);
    const imp = child('routing-import.ts', [join(FIXTURES, file), dir]);
    const t0 = performance.now();
    const e = BuiltinEngine.load(join(dir, GRAPH_FILE), { snapMaxMeters: 1500 });
    const loadMs = performance.now() - t0;
    const pairs = pairsFor(e);
    process.stderr.write(`${name}: ${pairs.length} pairs, in-process queries\n`);
    const full = (p: [LatLng, LatLng]) => e.routeSync(p[0], p[1], { alternatives: 2, locale: 'en' });
    pairs.slice(0, 100).forEach(full); // JIT warm-up
    const fullMs = timeEach(pairs, full);
    const primaryMs = timeEach(pairs, (p) => e.routeSync(p[0], p[1], { alternatives: 0, locale: 'en' }));
    // Same seeds for both searches: distance-only CH query vs plain bidirectional Dijkstra.
    const g = e.graph,
      q = new CHQuery(g),
      dj = new BidiDijkstra({ n: g.meta.nodes, first: g.first, head: g.head, ms: g.ms });
    const snapped = pairs.map(([a, b]) => [snapPoint(g, a.lat, a.lng, 1500)!, snapPoint(g, b.lat, b.lng, 1500)!]);
    // the hierarchy's seeds are chains (turn costs included); Dijkstra's the snapped segments' end nodes
    const chSeeds = snapped.map(([a, b]) => [seedsOf(sourceSeeds(g, a, b).seeds), seedsOf(targetSeeds(g, b))] as const);
    const djSeeds = snapped.map(([a, b]) => [segmentEnds(g, a, true), segmentEnds(g, b, false)] as const);
    const chMs = timeEach(chSeeds, ([s, t]) => q.run(s, t));
    const djMs = timeEach(djSeeds, ([s, t]) => dj.run(s, t));
    const alts = pairs.map((p) => {
      const r = full(p);
      return r.kind === 'ok' ? r.paths.length : 0;
    });
    process.stderr.write(`${name}: HTTP\n`);
    const h = await http(dir, pairs);
    return {
      name,
      importS: imp.seconds,
      importPeakRssMb: imp.peakRssMb,
      counts: imp.counts,
      loadMs,
      pairs: pairs.length,
      fullP50: pct(fullMs, 50),
      fullP99: pct(fullMs, 99),
      primaryP50: pct(primaryMs, 50),
      primaryP99: pct(primaryMs, 99),
      chP50: pct(chMs, 50),
      dijkstraP50: pct(djMs, 50),
      speedup: pct(djMs, 50) / pct(chMs, 50),
      withAlternatives: alts.filter((n) => n > 1).length,
      httpP50: h.p50,
      httpP99: h.p99,
      httpServerP50: h.serverP50,
      httpServerP99: h.serverP99,
      httpSources: h.sources,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const results = [];
for (const [name, file] of DATASETS) results.push(await dataset(name, file));
let grid: Record<string, number> | undefined;
if (GRID > 0) {
  process.stderr.write(`grid ${GRID}x${GRID}: build + contract (slow in JS; progress below)\n`);
  grid = child('routing-grid.ts', [String(GRID)]);
}

console.log('\nRoad graphs (times in ms unless noted; queries are 1,000 distinct routable pairs)');
console.log(
  '| dataset | import+CH s | peak RSS MB | nodes | edges | shortcuts | load ms | route+2 alts+maneuvers p50 / p99 | primary+maneuvers p50 / p99 | CH query p50 | Dijkstra p50 | CH speed-up | HTTP p50 / p99 | served_in_ms p50 / p99 | HTTP sources |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.name} | ${f(r.importS, 1)} | ${f(r.importPeakRssMb, 0)} | ${r.counts.nodes} | ${r.counts.edges} | ${r.counts.shortcuts} | ${f(r.loadMs, 1)} | ${f(r.fullP50, 3)} / ${f(r.fullP99, 3)} | ${f(r.primaryP50, 3)} / ${f(r.primaryP99, 3)} | ${f(r.chP50, 3)} | ${f(r.dijkstraP50, 3)} | ${f(r.speedup, 1)}x | ${f(r.httpP50)} / ${f(r.httpP99)} | ${r.httpServerP50} / ${r.httpServerP99} | ${Object.entries(
      r.httpSources,
    )
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')} |`,
  );
}
if (grid) {
  console.log(`\nSynthetic grid ${GRID}x${GRID}`);
  console.log(
    '| nodes | edges | CH edges | core nodes | contraction s | peak RSS MB | CH p50 / p99 | Dijkstra p50 / p99 (100 q) | speed-up | mismatches |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${grid.nodes} | ${grid.edges} | ${grid.chEdges} | ${grid.coreNodes} | ${f(grid.buildS!, 1)} | ${f(grid.peakRssMb!, 0)} | ${f(grid.chP50!, 3)} / ${f(grid.chP99!, 3)} | ${f(grid.dijkstraP50!, 2)} / ${f(grid.dijkstraP99!, 2)} | ${f(grid.dijkstraP50! / grid.chP50!, 1)}x | ${grid.mismatches} |`,
  );
}
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const out = join(ROOT, 'bench', 'results', `routing-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), node: process.version, results, grid }, null, 2));
console.log(`\nsaved ${out}`);

/**
 * Plain Dijkstra's seeds for a snapped point: for each drivable direction of its segment, the end node driven to
 * (`from`: the cost of driving there) or driven from (the cost of driving on to the point).
 */
function segmentEnds(g: RoadGraph, s: Snap, from: boolean): Seed[] {
  const seeds: Seed[] = [];
  for (const bwd of [false, true]) {
    const [i0, i1] = segEdgeRange(g, s.seg, bwd);
    if (i0 === i1) continue;
    const e = g.segEdges[i0]!;
    const ahead = bwd ? s.t : 1 - s.t;
    const node = from === !bwd ? g.segB[s.seg]! : g.segA[s.seg]!;
    seeds.push([node, (from ? ahead : 1 - ahead) * g.ms[e]!]);
  }
  return seeds;
}
