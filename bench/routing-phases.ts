/**
 * Route answer phases on a large graph, optionally side by side with a baseline build: per route, the CH query,
 * unpacking, assembling, alternatives, maneuvers and the line text, timed as BuiltinEngine runs them; then whole
 * answers (routeSync, alternatives and maneuvers on, the line as `--overview` says) for long and local pairs, with
 * the baseline's and this build's answers compared as JSON text (a build before the simplified line writes the full
 * one: compare with `--overview full`). Both builds run over one loaded graph, alternating which goes first per pair.
 *
 * Run (built code; `npm run build` first):
 *   npx tsx bench/routing-phases.ts --graph <data>/roads.graph [--layout <country.osm.pbf>.layout.json]
 *     [--base <dir>] [--build <dir>] [--long 300] [--local 300] [--reps 3] [--overview simplified|full]
 * `--build` (default dist/) and `--base` are compiled trees holding routing/*.js (for a baseline:
 * `git worktree add /tmp/base <commit> && (cd /tmp/base && npm ci && npm run build)`, then `--base /tmp/base/dist`);
 * a baseline must read the graph the same way (the hierarchy over turns, graph file version 3, since turn costs).
 * `--layout` is the layout file of a synthetic country (bench/scale.ts): long pairs then join copies far apart and
 * local pairs stay inside one copy; without it pairs are random road nodes, split by distance.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { pct, prng } from './routing-stats.js';

const { values: args } = parseArgs({
  options: {
    graph: { type: 'string' },
    layout: { type: 'string' },
    base: { type: 'string' },
    build: { type: 'string', default: join(import.meta.dirname, '..', 'dist') },
    long: { type: 'string', default: '300' },
    local: { type: 'string', default: '300' },
    reps: { type: 'string', default: '3' },
    overview: { type: 'string', default: 'simplified' },
  },
});
if (!args.graph) throw new Error('--graph <data>/roads.graph is required');

interface LatLng {
  lat: number;
  lng: number;
}
type Pair = [LatLng, LatLng];
type Mods = { be: any; snap: any; path: any; alts: any; man: any; graph: any; chains: any; ov?: any; lj?: any };

async function load(dir: string): Promise<Mods> {
  // builds before the stage folders (routing/query/, routing/answer/ ...) hold every module in routing/ itself
  const at = (f: string) => (existsSync(resolve(dir, 'routing', f)) ? f : basename(f));
  const m = (f: string) => import(pathToFileURL(resolve(dir, 'routing', at(f))).href);
  const [be, snap, path, alts, man, graph, chains] = await Promise.all(
    [
      'builtin-engine.js',
      'query/snap.js',
      'query/path.js',
      'query/alternatives.js',
      'answer/maneuvers.js',
      'graph.js',
      'query/chains.js',
    ].map(m),
  );
  // builds before the simplified overview have no overview.js: their lines are full
  const ov = await m('answer/overview.js').catch(() => undefined);
  // builds before line-json.js write the line text in path.js
  const lj = await m('answer/line-json.js').catch(() => undefined);
  return { be, snap, path, alts, man, graph, chains, ov, lj };
}

const builds: Record<string, Mods> = { new: await load(args.build) };
if (args.base) builds.base = await load(args.base);
const names = Object.keys(builds);
let t0 = performance.now();
const g = builds.new!.graph.loadGraph(args.graph);
console.log(
  `graph: ${g.meta.nodes} nodes, loaded in ${Math.round(performance.now() - t0)} ms; builds: ${names.join(', ')}`,
);
const engines: Record<string, any> = Object.fromEntries(
  names.map((k) => [k, new builds[k]!.be.BuiltinEngine(g, { snapMaxMeters: 500 })]),
);

function pairs(nLong: number, nLocal: number): { long: Pair[]; local: Pair[] } {
  const rnd = prng(7);
  const long: Pair[] = [],
    local: Pair[] = [];
  if (args.layout) {
    const L = JSON.parse(readFileSync(args.layout, 'utf8')) as {
      copies: number;
      cols: number;
      offsets: Array<[number, number]>;
      roadSamples: Array<[number, number]>;
    };
    const rows = Math.ceil(L.copies / L.cols);
    const pt = (k: number): LatLng => {
      const [dx, dy] = L.offsets[k]!;
      const s = L.roadSamples[Math.floor(rnd() * L.roadSamples.length)]!;
      return { lat: s[1] + dy, lng: s[0] + dx };
    };
    const apart = (a: number, b: number) =>
      Math.abs((b % L.cols) - (a % L.cols)) + Math.abs(Math.floor(b / L.cols) - Math.floor(a / L.cols));
    while (long.length < nLong) {
      let a = 0,
        b = 0;
      while (apart(a, b) < (L.cols + rows) / 2) {
        a = Math.floor(rnd() * L.copies);
        b = Math.floor(rnd() * L.copies);
      }
      long.push([pt(a), pt(b)]);
    }
    while (local.length < nLocal) {
      const k = Math.floor(rnd() * L.copies);
      local.push([pt(k), pt(k)]);
    }
    return { long, local };
  }
  const { cell, rows, cols } = g.meta.grid;
  const span = Math.hypot(rows * cell, cols * cell);
  const node = (): LatLng => {
    const v = g.segA[Math.floor(rnd() * g.segA.length)];
    return { lat: g.lat[v], lng: g.lon[v] };
  };
  for (let tries = 0; (long.length < nLong || local.length < nLocal) && tries < 1e6; tries++) {
    const a = node(),
      b = node();
    const d = Math.hypot(a.lat - b.lat, a.lng - b.lng);
    if (d > span / 2 && long.length < nLong) long.push([a, b]);
    else if (d < span / 50 && local.length < nLocal) local.push([a, b]);
  }
  return { long, local };
}

const { long, local } = pairs(Number(args.long), Number(args.local));
const reps = Number(args.reps);
const PHASES = ['ch', 'unpack', 'assemble', 'alternatives', 'maneuvers', 'line'] as const;

/** A path's line as the overview asked for (builds before routes of chains take it from the path alone). */
function lineText(M: Mods, p: any): string {
  if (M.ov?.routeLine) {
    const l = M.ov.routeLine(g, p, args.overview);
    return (M.lj ?? M.path).lineJson(l.pts, l.count, l.keep);
  }
  return M.path.lineJson(p, args.overview === 'simplified' ? M.ov?.overviewIndices(p.pts, p.n + 1) : undefined);
}

/** One long route in phases, as BuiltinEngine.paths and routeSync run them. */
function phases(k: string, [A, B]: Pair, into: Record<string, number[]>): void {
  const M = builds[k]!,
    e = engines[k],
    q = e.q,
    check = e.check;
  const a = M.snap.snapPoint(g, A.lat, A.lng, 500),
    b = M.snap.snapPoint(g, B.lat, B.lng, 500);
  if (!a || !b) return;
  const ms: Record<string, number> = {};
  const time = <R>(ph: string, f: () => R): R => {
    const t = performance.now();
    const r = f();
    ms[ph] = performance.now() - t;
    return r;
  };
  const C = M.chains;
  const S = C.sourceSeeds(g, a, b).seeds,
    T = C.targetSeeds(g, b);
  const sources = C.seedsOf(S),
    targets = C.seedsOf(T);
  const r = time('ch', () => q.run(sources, targets, M.alts.MAX_STRETCH));
  const settledFull: unknown = q.lastSettled;
  if (!r) return;
  const turns = time('unpack', () => q.unpack(r.meet));
  const ends = { g, from: a, to: b, S, T };
  const primary = time('assemble', () => C.route(ends, q.seedF(r.meet), turns, q.seedB(r.meet)));
  const alts = time('alternatives', () => M.alts.viaAlternatives(ends, q, check, primary, r.meet, r.cost, 2));
  const all = [primary, ...alts];
  time('maneuvers', () => all.map((p) => M.man.maneuvers(g, p, 'en')));
  time('line', () => all.map((p) => lineText(M, p)));
  // search space: nodes settled by the full query alternatives need (above) and by a plain one (the stopping rule)
  if (typeof settledFull === 'number') {
    (into[`${k} settled full`] ??= []).push(settledFull);
    q.run(sources, targets, 0);
    (into[`${k} settled`] ??= []).push(q.lastSettled as number);
  }
  ms.total = PHASES.reduce((s, ph) => s + ms[ph]!, 0);
  for (const [ph, v] of Object.entries(ms)) (into[`${k} ${ph}`] ??= []).push(v);
}

const f2 = (x: number) => x.toFixed(2);
const ratio = (T: Record<string, number[]>, key: string, p: number) =>
  args.base ? `  x${(pct(T[`new ${key}`]!, p) / pct(T[`base ${key}`]!, p)).toFixed(2)}` : '';

let differ = 0,
  compared = 0;
for (let rep = 0; rep < reps; rep++) {
  const P: Record<string, number[]> = {},
    W: Record<string, number[]> = {};
  t0 = performance.now();
  long.forEach((pair, i) => {
    for (const k of (i + rep) % 2 ? names : [...names].reverse()) phases(k, pair, P);
  });
  for (const [kind, list] of [
    ['long', long],
    ['local', local],
  ] as const)
    list.forEach(([a, b], i) => {
      const opts = { alternatives: i % 7 === 3 ? 0 : 2, locale: i % 5 === 1 ? 'ar' : 'en', overview: args.overview };
      const text: Record<string, string> = {};
      for (const k of (i + rep) % 2 ? names : [...names].reverse()) {
        const t = performance.now();
        const res = engines[k].routeSync(a, b, opts);
        (W[`${k} ${kind}`] ??= []).push(performance.now() - t);
        if (rep === 0) text[k] = JSON.stringify(res);
      }
      if (rep === 0 && args.base) {
        compared++;
        if (text.base !== text.new) differ++;
      }
    });
  console.log(`\nrun ${rep + 1}/${reps} (${Math.round((performance.now() - t0) / 1000)} s)`);
  console.log(`phases of a long route, median ms (${long.length} pairs):`);
  for (const ph of [...PHASES, 'total'])
    console.log(
      `  ${ph.padEnd(13)}` +
        names.map((k) => ` ${k} ${f2(pct(P[`${k} ${ph}`] ?? [NaN], 50)).padStart(6)}`).join('') +
        ratio(P, ph, 50),
    );
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  for (const k of names)
    if (P[`${k} settled`])
      console.log(
        `search space (${k}), nodes settled per long query, mean / median: plain ${Math.round(mean(P[`${k} settled`]!))} / ${pct(P[`${k} settled`]!, 50)}, full (alternatives) ${Math.round(mean(P[`${k} settled full`]!))} / ${pct(P[`${k} settled full`]!, 50)}`,
      );
  console.log('whole answers (routeSync, alternatives and maneuvers), ms p50 / p90 / p99:');
  for (const kind of ['long', 'local'])
    for (const k of names) {
      const s = W[`${k} ${kind}`]!;
      console.log(
        `  ${kind.padEnd(5)} ${k.padEnd(4)} ${[50, 90, 99].map((p) => f2(pct(s, p))).join(' / ')}` +
          (k === 'new' ? [50, 90, 99].map((p) => ratio(W, kind, p)).join('') : ''),
      );
    }
}
if (args.base) console.log(`\nanswers compared: ${compared}, differing: ${differ}`);
if (differ) process.exitCode = 1;
