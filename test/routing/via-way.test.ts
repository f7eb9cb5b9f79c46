import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import FlatQueue from 'flatqueue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRoadGraph } from '../../src/import/roads/build-graph.js';
import { readOsmRoads } from '../../src/import/roads/osm-read.js';
import { splitRestrictedNodes, type Restriction } from '../../src/import/roads/restrictions.js';
import { applyViaWayRestrictions, type ViaWayRestriction } from '../../src/import/roads/via-way.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import type { ImportSummary } from '../../src/import/types.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { costsBothWays } from '../helpers/road-seeds.js';
import { GRAPH_FILE } from '../../src/routing/graph.js';
import { snapPoint } from '../../src/routing/query/snap.js';
import { startServer } from '../helpers/app.js';
import { OSM_FIXTURES } from '../helpers/fixtures.js';
import { pathLine, pathManeuvers } from '../../src/routing/answer/route-record.js';

/**
 * test/fixtures/osm/via-way-restrictions.osm(.pbf), a hand-written grid (see the comment at the top of the XML):
 *
 *   A2 ---- B2          J1N ------------ J2N
 *   ^        |           |                |
 *   A1 ==== B1    W0 -- J1 ---- M ------ J2 ---- E0      (Al-Madina Street, lat 31.9520)
 *   ^        v           |      |         |
 *   A0 ---- B0 -------- J1S --- MS ------ J2S
 *
 * A: Queen Rania Street, a dual carriageway (A northbound, B southbound, one-way) with crossovers; U-turns over the
 * middle one A1 = B1 (way 2005) are banned both ways (3001, and 3002 tagged restriction:motorcar).
 * B: eastbound from W0 on 2101, after J1 (2102) and M (2103) only straight on at J2 (3101); via node J2: no right
 * turn from 2103 (3102). Westbound from E0 on 2104, no left turn at J1 after 2103 and 2102 (3106, its via ways
 * listed out of order); 3103 is the same for everyone but cars. 3104's ways do not meet, 3105 names a way outside
 * the extract.
 */
const FILE = join(OSM_FIXTURES, 'via-way-restrictions.osm.pbf');
const P = {
  nbBeforeA1: { lat: 31.9515, lng: 35.9 },
  sbAfterB1: { lat: 31.9515, lng: 35.9003 },
  sbBeforeB1: { lat: 31.9525, lng: 35.9003 },
  nbAfterA1: { lat: 31.9525, lng: 35.9 },
  nbNorth: { lat: 31.953, lng: 35.9 },
  west: { lat: 31.952, lng: 35.904 }, // on 2101, before J1
  east: { lat: 31.952, lng: 35.908 }, // on 2104, after J2
  gardensNorth: { lat: 31.9525, lng: 35.907 }, // just north of J2
  gardensSouth: { lat: 31.9515, lng: 35.907 }, // just south of J2
  wasfiNorth: { lat: 31.953, lng: 35.905 }, // north of J1
  sideStreet: { lat: 31.951, lng: 35.906 }, // south of M
  onViaB: { lat: 31.952, lng: 35.9065 }, // on 2103, between M and J2
  wasfiSouth: { lat: 31.951, lng: 35.905 }, // south of J1
};
const A2 = [35.9, 31.954],
  B2 = [35.9003, 31.954],
  E0 = [35.909, 31.952];

let dir: string;
let summary: ImportSummary;
let withRel: BuiltinEngine, without: BuiltinEngine;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svcmaps-viaway-'));
  summary = await roadsImporter.run(FILE, dir, () => {}, new AbortController().signal);
  withRel = BuiltinEngine.load(join(dir, GRAPH_FILE), { snapMaxMeters: 500 });
  // The same extract without its via-way relations (the via-node one stays), through the same reader and builder.
  const osm = await readOsmRoads(FILE, { ferries: false, progress: () => {}, signal: new AbortController().signal });
  const graph = buildRoadGraph({ ...osm, restrictions: osm.restrictions.filter((r) => !r.viaWays) }, 'no-via-way');
  without = new BuiltinEngine(graph, { snapMaxMeters: 500 });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Pt = { lat: number; lng: number };
function route(e: BuiltinEngine, a: Pt, b: Pt) {
  const r = e.routeSync(a, b, { alternatives: 0, locale: 'en' });
  if (r.kind !== 'ok') throw new Error('unroutable');
  const p = r.paths[0]!;
  return { ...p, maneuvers: pathManeuvers(p), coords: JSON.parse(pathLine(p)) as number[][] };
}
const passes = (coords: number[][], pt: number[]) => coords.some((c) => c[0] === pt[0] && c[1] === pt[1]);

describe('via-way turn restrictions over the real importer and router', () => {
  it('the import applies the via-way relations and counts the one that cannot be applied, by reason', () => {
    expect(summary.counts).toMatchObject({
      ways: 18,
      restrictions: 1, // the via-node one (3102)
      via_way_restrictions: 4, // 3001, 3002 (restriction:motorcar), 3101, 3106; 3103 exempts motorcars
      via_way_restrictions_skipped: 1,
      via_way_restrictions_skipped_disconnected: 1, // 3104
      via_way_restrictions_not_drivable: 1, // 3105: its via way is not in the extract
    });
    expect(summary.counts.via_way_restrictions_skipped_malformed).toBeUndefined();
    const g = withRel.graph;
    // 3 copies of J2 (via node, 4 ways in) + A1', B1' for each U-turn ban + J1', M', J2' for only_straight_on
    // + J2', M', J1' westbound for no_left_turn
    expect(g.meta.nodes - g.meta.baseNodes).toBe(3 + 2 + 2 + 3 + 3);
    expect(without.graph.meta.nodes - without.graph.meta.baseNodes).toBe(3);
  });

  it('no_u_turn via the median crossover, both ways: the route goes round by the next crossover', () => {
    const free = route(without, P.nbBeforeA1, P.sbAfterB1);
    expect(free.distance_m).toBeGreaterThan(130);
    expect(free.distance_m).toBeLessThan(150); // 55 m + 28 m across + 55 m
    expect(passes(free.coords, A2)).toBe(false);
    const banned = route(withRel, P.nbBeforeA1, P.sbAfterB1);
    // up to A2, across to B2, back down: 55 + 222 + 28 + 222 + 55 m (turning back on the crossover does not help)
    expect(banned.distance_m).toBeGreaterThan(570);
    expect(banned.distance_m).toBeLessThan(600);
    expect(passes(banned.coords, A2) && passes(banned.coords, B2)).toBe(true);
    // 3002, the other carriageway (tagged restriction:motorcar): round by the southern crossover
    expect(route(without, P.sbBeforeB1, P.nbAfterA1).distance_m).toBeLessThan(150);
    expect(route(withRel, P.sbBeforeB1, P.nbAfterA1).distance_m).toBeGreaterThan(570);
  });

  it('driving on past the via way, or leaving it half-way, is not restricted', () => {
    // straight on at A1 instead of taking the crossover
    expect(route(withRel, P.nbBeforeA1, P.nbNorth).distance_m).toBeCloseTo(
      route(without, P.nbBeforeA1, P.nbNorth).distance_m,
      6,
    );
    // off the only_straight_on via path at its first node (J1, left) and at its middle node (M, right)
    for (const to of [P.wasfiNorth, P.sideStreet]) {
      const free = route(without, P.west, to),
        r = route(withRel, P.west, to);
      expect(r.distance_m).toBeCloseTo(free.distance_m, 6);
      expect(r.distance_m).toBeLessThan(300);
    }
    const side = route(withRel, P.west, P.sideStreet);
    expect(side.maneuvers!.map((m) => `${m.type} ${m.modifier ?? ''} ${m.street_name}`)).toEqual([
      'depart  Al-Madina Al-Munawwara Street',
      'turn right Ibn Khaldun Street',
      'arrive  Ibn Khaldun Street',
    ]);
  });

  it('only_straight_on over two via ways: straight on at J2 stays the one move there', () => {
    const straight = route(withRel, P.west, P.east);
    expect(straight.distance_m).toBeCloseTo(route(without, P.west, P.east).distance_m, 6);
    const free = route(without, P.west, P.gardensNorth);
    expect(free.distance_m).toBeLessThan(350); // left at J2
    const r = route(withRel, P.west, P.gardensNorth);
    expect(r.distance_m).toBeGreaterThan(free.distance_m + 300);
    // no left at J2: round the block by J1N and J2N instead (straight on to the dead end at E0 and back would
    // cost a U-turn there), coming down Gardens Street from the north
    expect(passes(r.coords, E0)).toBe(false);
    expect(r.maneuvers!.map((m) => `${m.type} ${m.modifier ?? ''} ${m.street_name}`)).toEqual([
      'depart  Al-Madina Al-Munawwara Street',
      'turn left Wasfi Al-Tal Street',
      'turn right Al-Kindi Street',
      'turn right Gardens Street',
      'arrive  Gardens Street',
    ]);
  });

  it('no_left_turn over two via ways listed out of order: chained as they connect, the left turn is banned', () => {
    const free = route(without, P.east, P.wasfiSouth);
    expect(free.distance_m).toBeLessThan(400); // 3 x 94 m west, then left 111 m
    const r = route(withRel, P.east, P.wasfiSouth);
    // left at J2 instead (leaving the via path where it starts), west along Al-Razi Street and north to the point
    expect(r.distance_m).toBeGreaterThan(free.distance_m + 200);
    expect(passes(r.coords, [35.905, 31.952])).toBe(false); // never at J1
    expect(r.maneuvers!.map((m) => m.street_name)).toContain('Al-Razi Street');
  });

  it('a via-node restriction on the via path still holds (via-way copies are made on the split graph)', () => {
    // 3102: no right turn at J2 coming along 2103, whether or not 3101 brought the car there
    expect(route(without, P.onViaB, P.gardensSouth).distance_m).toBeGreaterThan(400);
    expect(route(withRel, P.onViaB, P.gardensSouth).distance_m).toBeGreaterThan(400);
    expect(route(withRel, P.west, P.gardensSouth).distance_m).toBeGreaterThan(
      route(without, P.west, P.gardensSouth).distance_m - 1,
    );
  });

  it('copies share their junctions coordinates; snapping keeps to the real roads; CH equals plain Dijkstra', () => {
    const g = withRel.graph;
    // A1 and B1 are entered only from their copies' edges now; their segments still count as the main network
    expect(Array.from(g.segTiny).every((x) => x === 0)).toBe(true);
    const coords = new Set<string>();
    for (let v = 0; v < g.meta.baseNodes; v++) coords.add(`${g.lon[v]},${g.lat[v]}`);
    for (let v = g.meta.baseNodes; v < g.meta.nodes; v++) expect(coords.has(`${g.lon[v]},${g.lat[v]}`)).toBe(true);
    const costs = costsBothWays(g);
    for (let a = 0; a < g.segA.length; a++)
      for (let b = 0; b < g.segA.length; b++) {
        const mid = (s: number) => [
          (g.lat[g.segA[s]!]! + g.lat[g.segB[s]!]!) / 2,
          (g.lon[g.segA[s]!]! + g.lon[g.segB[s]!]!) / 2,
        ];
        const [la, oa] = mid(a),
          [lb, ob] = mid(b);
        const c = costs(snapPoint(g, la!, oa!, 50)!, snapPoint(g, lb!, ob!, 50)!);
        expect(c.ch).toBeCloseTo(c.turnDijkstra, 6);
        expect(c.chains).toBeCloseTo(c.road, 6);
      }
  });

  it('the app answers /directions over the imported graph with the detour', async () => {
    const s = await startServer({ data_dir: dir });
    try {
      const body = (a: Pt, b: Pt) => ({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng });
      const res = await s.post('/maps/v1/directions', body(P.nbBeforeA1, P.sbAfterB1), { 'X-API-Key': s.key().key });
      expect(res.status).toBe(200);
      const data = (await res.json()).data;
      expect(data.engine).toBe('svc');
      expect(data.distance_meters).toBeGreaterThan(570);
    } finally {
      await s.close();
    }
  });
});

/**
 * The graph construction against a search that needs no graph trick: Dijkstra over (node, last edges driven), where
 * a move is allowed unless it completes a restricted sequence (or U-turns on a via path, the one addition the
 * construction makes on purpose). Random grids with one-ways, random via-node and via-way restrictions, some
 * sharing a from-edge and via path, some overlapping (a via edge that is another one's from-edge).
 */
describe('via-way restrictions equal a search over edge histories', () => {
  it('on random grids with via-node and via-way restrictions', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]!;
    let compared = 0,
      restricted = 0;
    for (let round = 0; round < 40; round++) {
      const W = 4,
        n = W * W;
      const tail: number[] = [],
        head: number[] = [],
        ms: number[] = [];
      for (let r = 0; r < W; r++)
        for (let c = 0; c < W; c++) {
          const u = r * W + c;
          for (const v of [c + 1 < W ? u + 1 : -1, r + 1 < W ? u + W : -1]) {
            if (v < 0) continue;
            const dir = rnd();
            const add = (a: number, b: number) => {
              tail.push(a);
              head.push(b);
              ms.push(1 + Math.floor(rnd() * 50));
            };
            if (dir < 0.85) add(u, v);
            if (dir > 0.15) add(v, u);
          }
        }
      const m = tail.length;
      const e = {
        tail: Uint32Array.from(tail),
        head: Uint32Array.from(head),
        way: Uint32Array.from(tail, (_, i) => i),
      };
      const outOf = (v: number) => [...Array(m).keys()].filter((i) => tail[i] === v);
      const viaNode: Restriction[] = [];
      for (let k = 0; k < 3; k++) {
        const f = Math.floor(rnd() * m),
          outs = outOf(head[f]!);
        if (outs.length) viaNode.push({ via: head[f]!, from: [f], to: [pick(outs)], only: rnd() < 0.3 });
      }
      const viaWay: ViaWayRestriction[] = [];
      for (let k = 0; k < 5; k++) {
        let from: number[], via: number[];
        const prev = viaWay.length && rnd() < 0.3 ? pick(viaWay) : undefined;
        if (prev) {
          from = prev.from;
          via = prev.via.slice(0, 1 + Math.floor(rnd() * prev.via.length));
        } else {
          // a random walk, mostly without U-turns; sometimes from an edge of an earlier via path
          from = [viaWay.length && rnd() < 0.3 ? pick(pick(viaWay).via) : Math.floor(rnd() * m)];
          via = [];
          let last = from[0]!;
          for (let s = 1 + Math.floor(rnd() * 3); s > 0; s--) {
            const uTurns = rnd() < 0.15;
            const outs = outOf(head[last]!).filter((i) => uTurns || head[i] !== tail[last]);
            if (!outs.length) break;
            via.push((last = pick(outs)));
          }
        }
        const outs = outOf(head[via.at(-1) ?? from[0]!]!);
        if (via.length && outs.length) viaWay.push({ from, via, to: [pick(outs)], only: rnd() < 0.3 });
      }
      const split = splitRestrictedNodes(n, e, viaNode);
      const full = applyViaWayRestrictions(n, e, split, viaWay);
      const baseOf = (v: number) => (v < n ? v : full.copyBase[v - n]!);
      for (let k = 0; k < 6; k++) {
        const e0 = Math.floor(rnd() * m);
        const first = full.base.indexOf(e0);
        if (first < 0) continue; // a via-node only_* removed it
        const got = new Array<number>(n).fill(Infinity);
        const dist = dijkstra(full.nodes, full.tail, full.head, (i) => ms[full.base[i]!]!, full.head[first]!);
        dist.forEach((d, v) => (got[baseOf(v)] = Math.min(got[baseOf(v)]!, d)));
        const want = historySearch(n, tail, head, ms, viaNode, viaWay, e0);
        expect(got).toEqual(want);
        compared++;
        if (
          want.some(
            (d, v) => d !== dijkstra(n, Uint32Array.from(tail), Uint32Array.from(head), (i) => ms[i]!, head[e0]!)[v],
          )
        )
          restricted++;
      }
    }
    expect(compared).toBeGreaterThan(200);
    expect(restricted).toBeGreaterThan(20); // the restrictions did change distances
  });
});

function dijkstra(n: number, tail: Uint32Array, head: Uint32Array, w: (i: number) => number, s: number): number[] {
  const out: number[][] = Array.from({ length: n }, () => []);
  tail.forEach((t, i) => out[t]!.push(i));
  const dist = new Array<number>(n).fill(Infinity);
  const q = new FlatQueue<number>();
  dist[s] = 0;
  q.push(s, 0);
  while (q.length) {
    const d = q.peekValue()!,
      v = q.pop()!;
    if (d > dist[v]!) continue;
    for (const i of out[v]!) {
      const nd = d + w(i);
      if (nd < dist[head[i]!]!) q.push(head[i]!, (dist[head[i]!] = nd));
    }
  }
  return dist;
}

/** Shortest distances from "just drove e0" to every node, over states (node, the last edges driven). */
function historySearch(
  n: number,
  tail: number[],
  head: number[],
  ms: number[],
  viaNode: Restriction[],
  viaWay: ViaWayRestriction[],
  e0: number,
): number[] {
  const patterns = viaWay.flatMap((r) => r.from.map((f) => ({ seq: [f, ...r.via], to: r.to, only: r.only })));
  const L = Math.max(1, ...patterns.map((p) => p.seq.length));
  const ok = (hist: number[], b: number): boolean => {
    const last = hist[hist.length - 1]!;
    for (const r of viaNode)
      if (r.via === tail[b] && r.from.includes(last) && r.to.includes(b) !== r.only) return false;
    let onVia = false,
      continues = false;
    for (const p of patterns)
      for (let i = 0; i < p.seq.length && i < hist.length; i++) {
        if (!p.seq.slice(0, i + 1).every((x, j) => x === hist[hist.length - 1 - i + j])) continue;
        if (i >= 1) onVia = true;
        if (i === p.seq.length - 1) {
          if (p.to.includes(b) !== p.only) return false;
        } else if (p.seq[i + 1] === b) continues = true;
      }
    return !(onVia && !continues && head[b] === tail[last]);
  };
  const best = new Array<number>(n).fill(Infinity);
  const dist = new Map<string, number>();
  const q = new FlatQueue<[number, number[]]>();
  q.push([head[e0]!, [e0]], 0);
  dist.set(`${head[e0]}|${e0}`, 0);
  while (q.length) {
    const d = q.peekValue()!,
      [v, hist] = q.pop()!;
    if (d > dist.get(`${v}|${hist.join(',')}`)!) continue;
    best[v] = Math.min(best[v]!, d);
    for (let b = 0; b < tail.length; b++) {
      if (tail[b] !== v || !ok(hist, b)) continue;
      const h2 = [...hist, b].slice(-L),
        key = `${head[b]}|${h2.join(',')}`,
        nd = d + ms[b]!;
      if (nd < (dist.get(key) ?? Infinity)) {
        dist.set(key, nd);
        q.push([head[b]!, h2], nd);
      }
    }
  }
  return best;
}
