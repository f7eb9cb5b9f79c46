import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRoadGraph } from '../../src/import/roads/build-graph.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { CHQuery } from '../../src/routing/query/ch-query.js';
import { chainsOf, route, seedAt, seedsOf, sourceSeeds, targetSeeds } from '../../src/routing/query/chains.js';
import { GRAPH_FILE, loadGraph } from '../../src/routing/graph.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { readGraphHeader, writeGraphFile } from '../../src/routing/build/graph-file.js';
import { maneuvers } from '../../src/routing/answer/maneuvers.js';
import { inspectDataDir } from '../../src/ops/status.js';
import { statusText } from '../../src/cli/status.js';
import { routeLine } from '../../src/routing/answer/overview.js';
import { assemble, linePoints, type RoutePath } from '../../src/routing/query/path.js';
import { pathManeuvers } from '../../src/routing/answer/route-record.js';
import type { Snap } from '../../src/routing/query/snap.js';
import { LIECHTENSTEIN_PBF } from '../helpers/fixtures.js';
import { osmRoads } from '../helpers/osm-roads.js';
import { snapOnSegment } from '../helpers/road-seeds.js';

/**
 * Routes built of whole chains (path.ts) against the same routes built road edge by road edge, on the Liechtenstein
 * import: the same line, length and maneuvers, where the chain route reads a chain's summary and each turn's
 * precomputed maneuver (route-summary.ts) instead of its road edges.
 */
describe('routes of chains', () => {
  let dir: string;
  let g: RoadGraph;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-chains-'));
    await roadsImporter.run(LIECHTENSTEIN_PBF, dir, () => {}, new AbortController().signal);
    g = loadGraph(join(dir, GRAPH_FILE));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Random snapped pairs across the country. */
  function pairs(count: number): Array<[Snap, Snap]> {
    let seed = 29;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const out: Array<[Snap, Snap]> = [];
    for (let i = 0; i < count; i++) {
      const at = () => snapOnSegment(g, Math.floor(rnd() * g.segA.length), rnd(), 1000);
      out.push([at(), at()]);
    }
    return out;
  }

  /** The shortest route over chains, and the same route of road edges (without its turns' time). */
  function bothWays(q: CHQuery, a: Snap, b: Snap): { chains: RoutePath; edges: RoutePath; turnMs: number } | undefined {
    const S = sourceSeeds(g, a, b).seeds,
      T = targetSeeds(g, b);
    const r = q.run(seedsOf(S), seedsOf(T));
    if (!r) return undefined;
    const turns = q.unpack(r.meet),
      sNode = q.seedF(r.meet),
      tNode = q.seedB(r.meet);
    const s = seedAt(S, sNode),
      t = seedAt(T, tNode);
    const roads = [...s.roads];
    for (const c of chainsOf(g, turns)) roads.push(...g.cEdges.subarray(g.cEdgeFirst[c], g.cEdgeFirst[c + 1]));
    roads.push(...t.roads);
    let turnMs = t.turnMs;
    for (const x of turns) turnMs += g.tMs[x]!;
    return {
      chains: route({ g, from: a, to: b, S, T }, sNode, turns, tNode),
      edges: assemble(g, a, b, s.end, Uint32Array.from(roads), t.end),
      turnMs,
    };
  }

  it('the same line, length, time and maneuvers as the route of road edges', () => {
    const q = new CHQuery(g);
    let routes = 0,
      chainPieces = 0,
      announced = 0;
    for (const [a, b] of pairs(300)) {
      const r = bothWays(q, a, b);
      if (!r) continue;
      routes++;
      const { chains: p, edges: e } = r;
      chainPieces += Array.from(p.chain).filter((c) => c >= 0).length;
      const full = linePoints(g, p, -1);
      expect(full.count).toBe(e.n + 1);
      expect(Array.from(full.pts.subarray(0, 2 * full.count))).toEqual(Array.from(e.pts));
      expect(p.distM).toBeCloseTo(e.distM, 6);
      expect(p.ms).toBeCloseTo(e.ms + r.turnMs, 6);
      for (const locale of ['en', 'ar'] as const) {
        // durations differ by the turns' time, which the route of road edges leaves out
        const said = (x: RoutePath) => maneuvers(g, x, locale).map(({ duration_s: _, ...m }) => m);
        const m = said(p);
        expect(m).toEqual(said(e));
        announced += m.length - 2;
      }
    }
    expect(routes).toBeGreaterThan(250);
    expect(chainPieces).toBeGreaterThan(routes * 10);
    expect(announced).toBeGreaterThan(routes * 4);
  });

  it('the default line keeps chains whole only within the bound, and stays within half a pixel of 1024', () => {
    const q = new CHQuery(g);
    let dropped = 0;
    for (const [a, b] of pairs(120)) {
      const r = bothWays(q, a, b);
      if (!r) continue;
      const full = Array.from(r.edges.pts);
      const line = routeLine(g, r.chains, 'simplified');
      const kept = Array.from(line.keep!, (k) => [line.pts[2 * k]!, line.pts[2 * k + 1]!]);
      // an in-order subset of the full line, with the same ends
      let minX = Infinity,
        maxX = -Infinity,
        minY = Infinity,
        maxY = -Infinity;
      for (let i = 0; i < full.length; i += 2) {
        minX = Math.min(minX, full[i]!);
        maxX = Math.max(maxX, full[i]!);
        minY = Math.min(minY, full[i + 1]!);
        maxY = Math.max(maxY, full[i + 1]!);
      }
      const c = Math.cos((((minY + maxY) / 2) * Math.PI) / 180);
      const tol = Math.max((maxX - minX) * c, maxY - minY) / 2048;
      expect(kept[0]).toEqual([full[0], full[1]]);
      expect(kept.at(-1)).toEqual([full.at(-2), full.at(-1)]);
      let k = 0;
      for (let i = 0; i < full.length; i += 2) {
        const [x, y] = [full[i]!, full[i + 1]!];
        if (k + 1 < kept.length && x === kept[k + 1]![0] && y === kept[k + 1]![1]) {
          k++;
          continue;
        }
        if (x === kept[k]![0] && y === kept[k]![1]) continue;
        dropped++;
        // the distance from the kept segment spanning it, measured flat
        const [ax, ay] = kept[k]!,
          [bx, by] = kept[k + 1]!;
        const dx = (bx - ax) * c,
          dy = by - ay,
          px = (x - ax) * c,
          py = y - ay,
          l2 = dx * dx + dy * dy;
        const t = l2 > 0 ? Math.min(1, Math.max(0, (px * dx + py * dy) / l2)) : 0;
        expect(Math.hypot(px - t * dx, py - t * dy)).toBeLessThanOrEqual(tol);
      }
      expect(k).toBe(kept.length - 1);
    }
    expect(dropped).toBeGreaterThan(1000);
  });

  it('a graph file written before the summaries and the search blocks loads them and answers alike', () => {
    const sections = Object.fromEntries(
      Object.entries(g).filter(
        ([k, v]) => ArrayBuffer.isView(v) && !['cEnd', 'cDev', 'cWay', 'tSay', 'chFirst', 'chAdj'].includes(k),
      ),
    );
    Object.assign(sections, searchLists(g));
    const old = join(dir, 'before.graph');
    writeGraphFile(old, g.meta as unknown as Record<string, unknown>, sections);
    // as files were written then: sections on 8 bytes, under the magic of that layout
    relayOn8(old);
    expect(readGraphHeader(old)?.meta).toMatchObject({ nodes: g.meta.nodes, version: 3 });
    // svcmaps status tells the operator that a re-import would write the blocks
    expect(inspectDataDir(dir).roads?.search_blocks).toBe(true);
    const oldData = join(dir, 'old-data');
    mkdirSync(oldData);
    copyFileSync(old, join(oldData, GRAPH_FILE));
    expect(inspectDataDir(oldData).roads?.search_blocks).toBe(false);
    expect(statusText({ ...inspectDataDir(oldData), server: { url: 'http://127.0.0.1:1', up: false } })).toContain(
      'written before search blocks',
    );
    const before = loadGraph(old);
    expect(Array.from(before.cEnd)).toEqual(Array.from(g.cEnd));
    expect(Array.from(before.cDev)).toEqual(Array.from(g.cDev));
    expect(Array.from(before.cWay)).toEqual(Array.from(g.cWay));
    expect(Array.from(before.chFirst)).toEqual(Array.from(g.chFirst));
    expect(Array.from(before.chAdj)).toEqual(Array.from(g.chAdj));
    // loaded for the routing threads, the blocks made at load are shared memory too
    expect(loadGraph(old, { shared: true }).chAdj.buffer).toBeInstanceOf(SharedArrayBuffer);
    // every turn says: look closer (maneuvers.ts decides along the route, as the summaries decided at import)
    expect(before.tSay.every((x) => x === 0xffff)).toBe(true);
    const now = new BuiltinEngine(g, { snapMaxMeters: 500 }),
      then = new BuiltinEngine(before, { snapMaxMeters: 500 });
    for (const [a, b] of pairs(40)) {
      const ask = (e: BuiltinEngine) => e.routeSync(a, b, { alternatives: 2, locale: 'ar', overview: 'simplified' });
      expect(JSON.stringify(ask(then))).toBe(JSON.stringify(ask(now)));
    }
  });
});

/** The search graphs as files held them before the search blocks: up and down lists of CH edge ids, CSR by node. */
function searchLists({ chFirst, chAdj }: RoadGraph): Record<string, Uint32Array> {
  const n = chFirst.length - 1;
  const upFirst = new Uint32Array(n + 1),
    dnFirst = new Uint32Array(n + 1);
  const upEdge: number[] = [],
    dnEdge: number[] = [];
  for (let u = 0; u < n; u++) {
    const at = chFirst[u]!,
      down = at + 1 + 3 * chAdj[at]!;
    for (let i = at + 1; i < down; i += 3) upEdge.push(chAdj[i + 2]!);
    for (let i = down; i < chFirst[u + 1]!; i += 3) dnEdge.push(chAdj[i + 2]!);
    upFirst[u + 1] = upEdge.length;
    dnFirst[u + 1] = dnEdge.length;
  }
  return { upFirst, upEdge: Uint32Array.from(upEdge), dnFirst, dnEdge: Uint32Array.from(dnEdge) };
}

/** Rewrites a graph file in the layout of files written before sections started on 64 bytes (8, magic SVCRGRF1). */
function relayOn8(file: string): void {
  const b = readFileSync(file);
  const len = b.readUInt32LE(8);
  const header = JSON.parse(b.toString('utf8', 12, 12 + len)) as { sections: Array<{ offset: number }> };
  const pad = (n: number, a: number) => Math.ceil(n / a) * a;
  const from = pad(12 + len, 64);
  const spans = header.sections.map((e, i, all) => [e.offset, (all[i + 1]?.offset ?? b.length - from) - e.offset]);
  let at = 0;
  for (const [i, e] of header.sections.entries()) {
    e.offset = at;
    at = pad(at + spans[i]![1]!, 8);
  }
  const json = Buffer.from(JSON.stringify(header));
  const start = pad(12 + json.length, 8);
  const out = Buffer.alloc(start + at);
  out.write('SVCRGRF1', 0, 'latin1');
  out.writeUInt32LE(json.length, 8);
  json.copy(out, 12);
  for (const [i, e] of header.sections.entries())
    b.copy(out, start + e.offset, from + spans[i]![0]!, from + spans[i]![0]! + spans[i]![1]!);
  writeFileSync(file, out);
}

describe('roundabout exits', () => {
  /**
   * A one-way roundabout of six nodes (r0..r5, round in that order) with a two-way arm at each of r0, r2, r3 and r5:
   * from the arm at r0, the arms at r2 and r3 are exits passed on the way to the arm at r5.
   */
  it('counts every arm a driver can leave by, each on a node of its own', () => {
    const ring: Array<[number, number]> = [];
    for (let k = 0; k < 6; k++) {
      const angle = (-k * Math.PI) / 3 - Math.PI / 2; // r0 south, then round anticlockwise on the map
      ring.push([43.7 + 0.0004 * Math.sin(angle), 7.4 + 0.00055 * Math.cos(angle)]);
    }
    const arm = (k: number): [number, number] => [43.7 + 3 * (ring[k]![0] - 43.7), 7.4 + 3 * (ring[k]![1] - 7.4)];
    const nodes = [...ring, arm(0), arm(2), arm(3), arm(5)];
    const ways = [
      [0, 1, 2, 3, 4, 5, 0],
      [6, 0],
      [7, 2],
      [8, 3],
      [9, 5],
    ];
    const roads = osmRoads(nodes, ways, {
      oneway: [1, 0, 0, 0, 0],
      names: (i) => (i ? [`Arm ${i}`, '', '', ''] : ['', '', '', '']),
    });
    roads.wayRoundabout[0] = 1;
    const e = new BuiltinEngine(buildRoadGraph(roads, 'roundabout'), { snapMaxMeters: 500 });
    const mid = (k: number): { lat: number; lng: number } => {
      const [lat, lng] = arm(k);
      return { lat: (lat + ring[k]![0]) / 2, lng: (lng + ring[k]![1]) / 2 };
    };
    const leave = (to: number) => {
      const r = e.routeSync(mid(0), mid(to), { alternatives: 0, locale: 'en' });
      if (r.kind !== 'ok') throw new Error('unroutable');
      return pathManeuvers(r.paths[0]!)!.find((m) => m.type === 'roundabout');
    };
    expect(leave(2)).toMatchObject({ exit: 1, instruction: 'At the roundabout, take the 1st exit onto Arm 2' });
    expect(leave(3)).toMatchObject({ exit: 2, instruction: 'At the roundabout, take the 2nd exit onto Arm 3' });
    expect(leave(5)).toMatchObject({ exit: 3, instruction: 'At the roundabout, take the 3rd exit onto Arm 4' });
  });
});
