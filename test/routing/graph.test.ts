import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRoadGraph } from '../../src/import/roads/build-graph.js';
import { renumberForLocality } from '../../src/import/roads/locality.js';
import { osmRoads } from '../helpers/osm-roads.js';
import type { OsmRoads, RawRestriction } from '../../src/import/roads/osm-read.js';
import { carProfile, parseMaxspeed } from '../../src/routing/profile.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { buildCH } from '../../src/routing/build/ch-build.js';
import { CHQuery } from '../../src/routing/query/ch-query.js';
import { BidiDijkstra } from '../../src/routing/query/dijkstra.js';
import { randomGrid } from '../helpers/grid.js';
import { lowerBound } from '../../src/core/sorted.js';
import { GRAPH_FILE, loadGraph } from '../../src/routing/graph.js';
import { writeGraphFile } from '../../src/routing/build/graph-file.js';
import { LIECHTENSTEIN_PBF } from '../helpers/fixtures.js';
import { pathManeuvers } from '../../src/routing/answer/route-record.js';
import { costsBothWays, snapOnSegment } from '../helpers/road-seeds.js';
import { snapPoint } from '../../src/routing/query/snap.js';

describe('car profile', () => {
  it('parses maxspeed in km/h and mph; zone values fall back to the class default', () => {
    expect(parseMaxspeed('50')).toBe(50);
    expect(parseMaxspeed('30 mph')).toBeCloseTo(48.28, 1);
    expect(parseMaxspeed('80 km/h')).toBe(80);
    expect(parseMaxspeed('RU:urban')).toBeUndefined();
    expect(parseMaxspeed('none')).toBeUndefined();
    expect(carProfile({ highway: 'residential', maxspeed: 'DE:urban' })!.speedKmh).toBe(25);
  });

  it('oneway forms, implied oneways, access restrictions, ferries off by default', () => {
    expect(carProfile({ highway: 'primary', oneway: 'yes' })!.oneway).toBe(1);
    expect(carProfile({ highway: 'primary', oneway: '1' })!.oneway).toBe(1);
    expect(carProfile({ highway: 'primary', oneway: 'true' })!.oneway).toBe(1);
    expect(carProfile({ highway: 'primary', oneway: '-1' })!.oneway).toBe(-1);
    expect(carProfile({ highway: 'primary', junction: 'roundabout' })).toMatchObject({ oneway: 1, roundabout: true });
    expect(carProfile({ highway: 'motorway' })!.oneway).toBe(1);
    expect(carProfile({ highway: 'motorway', oneway: 'no' })!.oneway).toBe(0);
    expect(carProfile({ highway: 'residential', access: 'private' })).toBeUndefined();
    expect(carProfile({ highway: 'residential', motor_vehicle: 'no' })).toBeUndefined();
    expect(carProfile({ highway: 'residential', access: 'no', motorcar: 'yes' })).toBeDefined();
    expect(carProfile({ highway: 'residential', access: 'destination' })).toBeDefined();
    expect(carProfile({ highway: 'footway' })).toBeUndefined();
    expect(carProfile({ route: 'ferry' })).toBeUndefined();
    expect(carProfile({ route: 'ferry' }, { ferries: true })).toBeDefined();
  });
});

/**
 * A 3x3 grid of two-way streets (~220 m blocks) around a centre crossing C = node 4:
 *   6 - 7 - 8
 *   |   |   |
 *   3 - 4 - 5      row1 = 3-4-5 (west-east), col1 = 1-4-7 (south-north)
 *   |   |   |
 *   0 - 1 - 2
 */
function grid(restrictions: RawRestriction[]): OsmRoads {
  const nodes: Array<[number, number]> = [];
  for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) nodes.push([43.7 + r * 0.002, 7.4 + c * 0.003]);
  const ways = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
  ];
  return osmRoads(nodes, ways, { restrictions, names: (i) => [`Street ${i}`, `شارع ${i}`, '', ''] });
}

describe('turn restrictions (node splitting)', () => {
  // From the west arm (between 3 and 4) to the north arm (between 4 and 7): a left turn at C.
  const west = { lat: 43.702, lng: 7.4015 },
    north = { lat: 43.703, lng: 7.403 };
  const route = (r: RawRestriction[]) => {
    const e = new BuiltinEngine(buildRoadGraph(grid(r), 'grid'), { snapMaxMeters: 500 });
    const res = e.routeSync(west, north, { alternatives: 0, locale: 'en' });
    if (res.kind !== 'ok') throw new Error('unroutable');
    return { ...res.paths[0]!, maneuvers: pathManeuvers(res.paths[0]!) };
  };

  it('no_left_turn forces a detour; only_straight_on too; unrelated turns stay free', () => {
    const free = route([]);
    expect(free.distance_m).toBeLessThan(300);
    expect(free.maneuvers!.map((m) => m.type)).toEqual(['depart', 'turn', 'arrive']);
    expect(free.maneuvers![1]).toMatchObject({ modifier: 'left', instruction: 'Turn left onto Street 4' });
    const noLeft = route([{ fromWay: 101, viaNode: 5, toWay: 104, only: false }]);
    expect(noLeft.distance_m).toBeGreaterThan(free.distance_m + 300);
    const onlyStraight = route([{ fromWay: 101, viaNode: 5, toWay: 101, only: true }]);
    expect(onlyStraight.distance_m).toBeGreaterThan(free.distance_m + 300);
    // a restriction on another approach does not affect this route
    const other = route([{ fromWay: 104, viaNode: 5, toWay: 101, only: false }]);
    expect(other.distance_m).toBeCloseTo(free.distance_m, 3);
  });

  it('Arabic names come from name:ar', () => {
    const e = new BuiltinEngine(buildRoadGraph(grid([]), 'grid'), { snapMaxMeters: 500 });
    const r = e.routeSync(west, north, { alternatives: 0, locale: 'ar' });
    expect(r.kind === 'ok' && pathManeuvers(r.paths[0]!)![1]!.instruction).toBe('انعطف يسارًا إلى شارع 4');
  });
});

describe('maneuvers at a change of way', () => {
  // West-east through junction 1, where a side street leaves north: way 0 (nodes 0-1) then way 1 (nodes 1-2).
  const nodes: Array<[number, number]> = [
    [43.7, 7.4],
    [43.7, 7.403],
    [43.7, 7.406],
    [43.703, 7.403],
  ];
  const along = (second: [string, string, string, string]) => {
    const names = [['Main Street', '', '', 'R1'], second, ['Side Street', '', '', '']] as const;
    const g = buildRoadGraph(
      osmRoads(
        nodes,
        [
          [0, 1],
          [1, 2],
          [1, 3],
        ],
        { names: (i) => [...names[i]!] },
      ),
      'names',
    );
    const r = new BuiltinEngine(g, { snapMaxMeters: 500 }).routeSync(
      { lat: 43.7, lng: 7.4015 },
      { lat: 43.7, lng: 7.4045 },
      { alternatives: 0, locale: 'en' },
    );
    if (r.kind !== 'ok') throw new Error('unroutable');
    return pathManeuvers(r.paths[0]!)!.map((m) => m.instruction);
  };

  it('a new name going straight on is announced; the same name with another ref is not', () => {
    expect(along(['High Street', '', '', 'R1'])).toEqual([
      'Head east on Main Street',
      'Continue onto High Street',
      'You have arrived at your destination',
    ]);
    expect(along(['Main Street', '', '', 'R2'])).toEqual([
      'Head east on Main Street',
      'You have arrived at your destination',
    ]);
    expect(along(['Main Street', '', '', ''])).toEqual([
      'Head east on Main Street',
      'You have arrived at your destination',
    ]);
  });
});

/** The node whose out-edges (CSR `first`) hold edge e. */
const tailOf = (first: Uint32Array, e: number) => lowerBound(first, e + 1) - 1;

describe('numbering for locality', () => {
  it('renumbers nodes, edges and segments into the same graph, OSM nodes below the junction copies', () => {
    const { g, rnd } = randomGrid(30, 5);
    const n = g.n,
      m = g.head.length,
      nb = n - 40; // the last 40 nodes stand for junction copies
    const lat = Float64Array.from({ length: n }, (_, v) => Math.floor(v / 30) + rnd() / 10),
      lon = Float64Array.from({ length: n }, (_, v) => (v % 30) + rnd() / 10);
    const way = Uint32Array.from({ length: m }, () => Math.floor(rnd() * 50)),
      dist = Float32Array.from({ length: m }, () => rnd() * 100);
    const tails = Uint32Array.from({ length: m }, (_, e) => tailOf(g.first, e));
    const segEdges = Uint32Array.from({ length: m }, (_, e) => e);
    const junction = Uint8Array.from({ length: n }, () => (rnd() < 0.3 ? 1 : 0));
    const before = {
      ...{ first: g.first, head: g.head, ms: g.ms, dist, way, lat, lon },
      ...{ segA: tails, segB: g.head, segEdges, junction },
    };
    const after = renumberForLocality(before, nb);
    // per-node flags move with their nodes
    for (let v = 0; v < n; v++) expect(after.junction[after.lat.indexOf(lat[v]!)]).toBe(junction[v]);
    // an edge as what it is: its ends' positions, weight, length, way
    const edgeKey = (x: typeof before, e: number) =>
      [x.lat[tailOf(x.first, e)], x.lon[tailOf(x.first, e)], x.lat[x.head[e]!], x.lon[x.head[e]!]]
        .concat([x.ms[e]!, x.dist[e]!, x.way[e]!])
        .join();
    const keys = (x: typeof before) => Array.from({ length: m }, (_, e) => edgeKey(x, e)).sort();
    expect(keys(after)).toEqual(keys(before));
    for (let s = 0; s < m; s++) {
      // segment s still joins the same places, and its edge is the same edge
      expect([after.lat[after.segA[s]!], after.lon[after.segB[s]!]]).toEqual([lat[tails[s]!], lon[g.head[s]!]]);
      expect(edgeKey(after, after.segEdges[s]!)).toBe(edgeKey(before, s));
    }
    for (let v = nb; v < n; v++) expect(after.lat.indexOf(lat[v]!)).toBeGreaterThanOrEqual(nb);
  });
});

describe('contraction hierarchy', () => {
  it('CH distances equal plain Dijkstra on a random grid (with one-ways)', () => {
    const { g, rnd } = randomGrid(40, 3);
    const n = g.n;
    // a low core limit leaves an uncontracted core, so the core phase of the query is exercised too
    const full = buildCH(g),
      cored = buildCH(g, { coreDegree: 4, smallCore: 0 });
    expect(cored.coreNodes).toBeGreaterThan(100);
    const q = new CHQuery(full),
      qc = new CHQuery(cored, cored.coreNodes),
      d = new BidiDijkstra(g);
    for (let i = 0; i < 300; i++) {
      const s = Math.floor(rnd() * n),
        t = Math.floor(rnd() * n);
      const want = d.run([[s, 0]], [[t, 0]]);
      expect(q.run([[s, 0]], [[t, 0]])?.cost ?? Infinity).toBe(want);
      expect(qc.run([[s, 0]], [[t, 0]])?.cost ?? Infinity).toBe(want);
      // a full search (alternatives) also finds via nodes inside the core, each with a real s-v-t path cost
      if (want === Infinity) continue;
      expect(qc.run([[s, 0]], [[t, 0]], Infinity)?.cost).toBe(want);
      expect(qc.meetNodes.some((v) => cored.rank[v]! >= n - cored.coreNodes)).toBe(true);
      for (const v of qc.meetNodes) {
        if (i < 10) expect(qc.distF(v)).toBeGreaterThanOrEqual(d.run([[s, 0]], [[v, 0]]));
        expect(qc.distF(v) + qc.distB(v)).toBeGreaterThanOrEqual(want);
      }
    }
    // Shared ends of two packed paths, measured without unpacking them, equal the shared start and end of their
    // unpacked roads; a path shares all of itself with itself.
    for (let i = 0; i < 50; i++) {
      const s = Math.floor(rnd() * n),
        t = Math.floor(rnd() * n);
      if (!q.run([[s, 0]], [[t, 0]], Infinity)) continue;
      for (const v of q.meetNodes.slice(0, 5)) {
        const a = q.packed(v),
          b = q.packed(q.meetNodes[q.meetNodes.length - 1]!);
        const roadA: number[] = [],
          roadB: number[] = [];
        for (const e of a) q.expand(e, roadA);
        for (const e of b) q.expand(e, roadB);
        let start = 0,
          end = 0;
        for (let k = 0; k < Math.min(roadA.length, roadB.length) && roadA[k] === roadB[k]; k++)
          start += g.ms[roadA[k]!]!;
        for (let k = 1; k <= Math.min(roadA.length, roadB.length) && roadA.at(-k) === roadB.at(-k); k++)
          end += g.ms[roadA.at(-k)!]!;
        const whole = roadA.reduce((sum, x) => sum + g.ms[x]!, 0);
        expect(q.sharedEnds(a, a)).toBe(2 * whole);
        if (
          start + end <=
          Math.min(
            whole,
            roadB.reduce((sum, x) => sum + g.ms[x]!, 0),
          )
        )
          expect(q.sharedEnds(a, b)).toBe(start + end);
      }
    }
    // Positions inside a shortcut, found by descending into it, are where its unpacked road puts them.
    for (let i = 0; i < 500; i++) {
      const e = Math.floor(rnd() * full.chHead.length);
      const road: number[] = [];
      q.expand(e, road);
      const pos = [0];
      for (const x of road) pos.push(pos[pos.length - 1]! + g.ms[x]!);
      const nodes = [full.chTail[e]!, ...road.map((x) => g.head[x]!)];
      const off = Math.floor(rnd() * (full.chW[e]! + 1));
      const last = pos.findLastIndex((p) => p <= off),
        first = pos.findIndex((p) => p >= off);
      expect(q.lastWithin(e, off, 7)).toEqual([nodes[last], pos[last]! + 7]);
      expect(q.firstFrom(e, off, 7)).toEqual([nodes[first], pos[first]! + 7]);
    }
  });

  it('on the Liechtenstein import: CH equals Dijkstra, the file is written atomically', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-li-'));
    try {
      const file = LIECHTENSTEIN_PBF;
      const summary = await roadsImporter.run(file, dir, () => {}, new AbortController().signal);
      expect(summary.counts.edges).toBeGreaterThan(10_000);
      expect(readdirSync(dir)).toEqual([GRAPH_FILE]); // no temp file left behind
      const g = loadGraph(join(dir, GRAPH_FILE));
      // the hierarchy is over junctions and chains, a fifth of the road graph's nodes and edges
      expect(g.jNode.length).toBeLessThan(g.meta.nodes / 3);
      expect(g.cHead.length).toBeLessThan(g.head.length / 3);
      const costs = costsBothWays(g);
      let seed = 11,
        reachable = 0;
      const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      // points on segments (mid-chain mostly), so seeds walk their chains; same-chain pairs go along it
      const at = (s: number, t: number) => snapOnSegment(g, s, t, 1000);
      for (let i = 0; i < 400; i++) {
        const s = Math.floor(rnd() * g.segA.length),
          // a quarter of the pairs a few segments apart, often on one chain
          s2 = i % 4 ? Math.floor(rnd() * g.segA.length) : Math.min(g.segA.length - 1, s + 1 + Math.floor(rnd() * 4));
        const c = costs(at(s, rnd()), at(s2, rnd()));
        expect(c.ch).toBeCloseTo(c.turnDijkstra, 6);
        expect(c.chains).toBeCloseTo(c.road, 6);
        if (c.chains < Infinity) reachable++;
      }
      expect(reachable).toBeGreaterThan(330);
      // Snapping finds what measuring every segment finds: the nearest real road within reach, else the nearest
      // tiny-component segment, else nothing (points up to ~1.5 km off a road, so some are out of reach).
      const nearest = (lat: number, lon: number, max: number) => {
        const kx = 111_320 * Math.cos((lat * Math.PI) / 180),
          ky = 110_574;
        const best = [Infinity, Infinity]; // real, tiny
        for (let x = 0; x < g.segA.length; x++) {
          const [ax, ay, bx, by] = [g.segA[x]!, g.segB[x]!].flatMap((v) => [
            (g.lon[v]! - lon) * kx,
            (g.lat[v]! - lat) * ky,
          ]);
          const dx = bx! - ax!,
            dy = by! - ay!,
            l2 = dx * dx + dy * dy;
          const t = l2 > 0 ? Math.min(1, Math.max(0, -(ax! * dx + ay! * dy) / l2)) : 0;
          const d = Math.hypot(ax! + t * dx, ay! + t * dy);
          const k = g.segTiny[x] ? 1 : 0;
          if (d <= max && d < best[k]!) best[k] = d;
        }
        return best[0]! < Infinity ? best[0] : best[1]! < Infinity ? best[1] : undefined;
      };
      let missed = 0;
      for (let i = 0; i < 300; i++) {
        const s = Math.floor(rnd() * g.segA.length);
        const off = (i % 3 === 0 ? 0.03 : 0.003) * (rnd() - 0.5);
        const lat = g.lat[g.segA[s]!]! + off,
          lon = g.lon[g.segA[s]!]! + (rnd() - 0.5) * 2 * Math.abs(off);
        const got = snapPoint(g, lat, lon, 500),
          want = nearest(lat, lon, 500);
        if (want === undefined) {
          missed++;
          expect(got).toBeUndefined();
        } else expect(got?.meters).toBeCloseTo(want, 6);
      }
      expect(missed).toBeGreaterThan(5); // the out-of-reach case was exercised
      // Numbered along the roads (locality.ts): most edges lead to the next or previous node id (a third did when
      // numbered by OSM id), and each node's up and down edges in the hierarchy are one run of edge ids.
      let near = 0;
      for (let u = 0; u < g.meta.nodes; u++)
        for (let e = g.first[u]!; e < g.first[u + 1]!; e++) if (Math.abs(g.head[e]! - u) <= 1) near++;
      expect(near / g.head.length).toBeGreaterThan(0.75);
      // (a node's search block: its up edges, then its down edges, each as a triple whose third word is the edge id)
      for (let u = 0; u + 1 < g.chFirst.length; u++)
        for (let i = g.chFirst[u]! + 4; i < g.chFirst[u + 1]!; i += 3) expect(g.chAdj[i + 2]).toBe(g.chAdj[i - 1]! + 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a graph file of an earlier version (a hierarchy without turns) is refused with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-v2-'));
    try {
      await roadsImporter.run(LIECHTENSTEIN_PBF, dir, () => {}, new AbortController().signal);
      const g = loadGraph(join(dir, GRAPH_FILE));
      const sections = Object.fromEntries(Object.entries(g).filter(([k, v]) => k !== 'meta' && ArrayBuffer.isView(v)));
      const old = join(dir, 'v2.graph');
      writeGraphFile(old, { ...g.meta, version: 2 }, sections);
      expect(() => loadGraph(old)).toThrow(/v2\.graph: road graph version 2 is not 3; re-run `svcmaps import`$/);
      // a current file without one of its sections is refused too
      const { tMs: _dropped, ...rest } = sections;
      writeGraphFile(old, g.meta as unknown as Record<string, unknown>, rest);
      expect(() => loadGraph(old)).toThrow(/section tMs is missing; re-run `svcmaps import`/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('junctions and chains', () => {
  /**
   * A two-way road 0-1-2-3-4 with a side road 2-11-12 then 12-13-14 (14 back at 12's place), a one-way 4-5-6-7 and a
   * two-way ring 7-8-9-10-7: chain nodes are 1, 3, 5, 6, 8, 9, 10 and 11; 13 is not one (its two sides share a place).
   */
  function roads(): OsmRoads {
    const at: Array<[number, number]> = [
      [0, 0],
      [0, 1],
      [0, 2],
      [0, 3],
      [0, 4],
      [0, 5],
      [0, 6],
      [0, 7],
      [1, 8],
      [2, 7],
      [1, 6],
      [1, 2],
      [2, 2],
      [2, 3],
      [2, 2],
    ];
    const ways = [
      [0, 1, 2, 3, 4],
      [2, 11, 12],
      [12, 13, 14],
      [4, 5, 6, 7],
      [7, 8, 9, 10, 7],
    ];
    return osmRoads(
      at.map(([r, c]) => [43.7 + r * 0.002, 7.4 + c * 0.002]),
      ways,
      { oneway: [0, 0, 0, 1, 0] },
    );
  }

  it('chain every road edge once between junctions, and route alike with and without them', () => {
    const o = roads();
    const place = (lat: number, lon: number) => `${lat.toFixed(4)},${lon.toFixed(4)}`;
    const placeOf = Array.from(o.lat, (lat, i) => place(lat, o.lon[i]!));
    const g = buildRoadGraph(o, 'chains');
    const junctions = new Set(Array.from(g.jNode, (v) => place(g.lat[v]!, g.lon[v]!)));
    expect([...junctions].sort()).toEqual([0, 2, 4, 7, 12, 13].map((v) => placeOf[v]!).sort());
    // every road edge on exactly one chain, chains connected from junction to junction, weights summed
    const m = g.head.length;
    expect(Array.from(g.cEdges).sort((a, b) => a - b)).toEqual(Array.from({ length: m }, (_, e) => e));
    for (let j = 0; j + 1 < g.cFirst.length; j++)
      for (let c = g.cFirst[j]!; c < g.cFirst[j + 1]!; c++) {
        const roadsOf = Array.from(g.cEdges.subarray(g.cEdgeFirst[c], g.cEdgeFirst[c + 1]));
        let at = g.jNode[j]!;
        for (const x of roadsOf) {
          expect(tailOf(g.first, x)).toBe(at);
          at = g.head[x]!;
        }
        expect(at).toBe(g.jNode[g.cHead[c]!]);
        expect(g.cMs[c]).toBe(roadsOf.reduce((s, x) => s + g.ms[x]!, 0));
      }
    // every pair of points on the roads (same segment, same chain ahead and behind, against the one-way, around
    // the ring): the same cost as plain Dijkstra over every road node
    const costs = costsBothWays(g);
    const on = (s: number, t: number) => snapOnSegment(g, s, t, 50);
    let routable = 0;
    for (let a = 0; a < g.segA.length; a++)
      for (let b = 0; b < g.segA.length; b++)
        for (const [ta, tb] of [
          [0.3, 0.6],
          [0.6, 0.3],
        ]) {
          const c = costs(on(a, ta!), on(b, tb!));
          expect(c.chains).toBeCloseTo(c.road, 6);
          if (c.road < Infinity) routable++;
        }
    expect(routable).toBeGreaterThan(200);
    expect(routable).toBeLessThan(2 * g.segA.length ** 2); // the one-way leaves no way back to road 0
  });
});
