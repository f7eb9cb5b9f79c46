import { randomBytes } from 'node:crypto';
import { haversineMeters } from '../../core/geo.js';
import { buildCH } from '../../routing/build/ch-build.js';
import { routeSummaries } from '../../routing/build/route-summary.js';
import { GRAPH_VERSION, type RoadGraph, type RouteSummary } from '../../routing/road-graph.js';
import { GrowF64, GrowI32, GrowU32 } from './grow.js';
import { indexOfSorted } from '../../core/sorted.js';
import type { OsmRoads } from './osm-read.js';
import { renumberForLocality } from './locality.js';
import { splitRestrictedNodes, type Restriction } from './restrictions.js';
import { buildChains, junctionFlags } from './chains.js';
import { buildSegmentGrid, tinyComponents } from './segments.js';
import { buildTurns } from './turns.js';
import { applyViaWayRestrictions, resolveViaWayRestrictions } from './via-way.js';

/** Builds the routable graph (edges, snapping segments, turn restrictions, contraction hierarchy) from OSM roads. */
export function buildRoadGraph(
  o: OsmRoads,
  source: string,
  log: (stage: string, done?: number, total?: number) => void = () => {},
): RoadGraph {
  const { g0, nb, m, S, applied, viaWay, segA, segB, segFirst, segEdges, segTiny, grid, junction } = prepare(o, log);
  // after prepare() has returned: its arrays in the old numbering are garbage by now
  log('chains');
  const chains = buildChains(g0, junction);
  const J = chains.jNode.length,
    C = chains.cHead.length;
  log('turns');
  const turns = buildTurns(g0, chains, junction);
  // the hierarchy's original edge t: the turn and the whole chain it leads onto
  const w = new Uint32Array(turns.tHead.length);
  for (let t = 0; t < w.length; t++) w[t] = Math.min(turns.tMs[t]! + chains.cMs[turns.tHead[t]!]!, 0xffffffff);
  const { coreNodes, ...ch } = buildCH(
    { n: C, first: turns.tFirst, head: turns.tHead, ms: w },
    { progress: (done, total) => log('contraction', done, total) },
  );
  const graph: Omit<RoadGraph, keyof RouteSummary> = {
    meta: {
      version: GRAPH_VERSION,
      buildId: randomBytes(6).toString('hex'),
      source,
      builtAt: new Date().toISOString(),
      nodes: g0.n,
      baseNodes: nb,
      edges: m,
      names: o.names,
      grid: grid.meta,
      stats: {
        segments: S,
        restrictions: applied,
        viaWayRestrictions: viaWay.applied,
        // reasons a via-way relation was not applied, only when there are some
        ...(viaWay.notDrivable ? { viaWayNotDrivable: viaWay.notDrivable } : {}),
        ...(viaWay.disconnected ? { viaWayDisconnected: viaWay.disconnected } : {}),
        ...(viaWay.ambiguous ? { viaWayAmbiguous: viaWay.ambiguous } : {}),
        junctions: J,
        chains: C,
        turns: turns.tHead.length,
        chEdges: ch.chHead.length,
        chCoreNodes: coreNodes,
        ways: o.wayCls.length,
      },
    },
    ...g0,
    wayCls: o.wayCls,
    wayRoundabout: o.wayRoundabout,
    wayName: o.wayName,
    segA,
    segB,
    segFirst,
    segEdges,
    segTiny,
    cellFirst: grid.cellFirst,
    cellSeg: grid.cellSeg,
    ...chains,
    ...turns,
    ...ch,
  };
  log('summaries');
  return { ...graph, ...routeSummaries(graph) };
}

/**
 * The reader's node ids, coordinates and way refs (~30 B per node) are in the graph's own arrays once the base graph
 * is built. The caller holds `o` until the import ends, so they are let go here, before the renumbering (the
 * stage's peak since the hierarchy is over junctions): ~0.4 GB at 1,200 copies. `o` keeps its ways, names and
 * restrictions.
 */
function dropNodeArrays(o: OsmRoads): void {
  o.nodeIds = new Float64Array(0);
  o.lat = new Float64Array(0);
  o.lon = new Float64Array(0);
  o.found = new Uint8Array(0);
  o.refs = new Uint32Array(0);
  o.refStart = new Uint32Array(0);
}

/** The graph without its hierarchy: base edges (CSR), node splitting, segments, snapping grid, junction flags. */
function prepare(o: OsmRoads, log: (stage: string, done?: number, total?: number) => void) {
  // the way-order edges, split tables and position maps baseGraph() works with (~50 bytes per edge at scale) are
  // garbage once it returns, and the reader's node arrays are not needed past it
  const { nb, n, m, S, first, head, ms, dist, way, lat, lon, segA, segB, segFirst, segEdges, split, viaWay } =
    baseGraph(o, log);
  dropNodeArrays(o);
  const segTiny = tinyComponents(n, first, head, segA, segB, { baseNodes: nb, copyBase: split.copyBase });
  log('spatial index');
  const grid = buildSegmentGrid(lat, lon, segA, segB);
  // a stage each (a progress report between them, where a threaded import can also be stopped: import-thread.ts)
  log('junctions');
  const junction = junctionFlags(n, nb, split.copyBase, { segA, segB, segFirst, segEdges, lat, lon }, way);
  // numbered along the roads before the contraction, which then stores its edges in the same order (locality.ts)
  log('numbering');
  const r = renumberForLocality({ first, head, ms, dist, way, lat, lon, segA, segB, segEdges, junction }, nb);
  return {
    g0: { n, first: r.first, head: r.head, ms: r.ms, dist: r.dist, way: r.way, lat: r.lat, lon: r.lon },
    nb,
    m,
    S,
    applied: split.applied,
    viaWay,
    segA: r.segA,
    segB: r.segB,
    segFirst,
    segEdges: r.segEdges,
    segTiny,
    grid,
    junction: r.junction,
  };
}

/** Base edges (CSR), node splitting for turn restrictions, and the segments with their graph edges. */
function baseGraph(o: OsmRoads, log: (stage: string, done?: number, total?: number) => void) {
  const nb = o.nodeIds.length;
  // 1. Segments and base edges, way by way: every consecutive node pair of a way is one segment; it yields one
  //    directed base edge per direction the way's oneway allows.
  const segA = new GrowU32(),
    segB = new GrowU32(),
    segFwd = new GrowI32(),
    segBwd = new GrowI32();
  const bTail = new GrowU32(),
    bHead = new GrowU32(),
    bWay = new GrowU32(),
    bDist = new GrowF64(),
    bMs = new GrowU32();
  const ways = o.wayCls.length;
  for (let w = 0; w < ways; w++) {
    const ow = o.wayOneway[w]!;
    const mps = o.waySpeed[w]! / 3.6;
    for (let i = o.refStart[w]!; i + 1 < o.refStart[w + 1]!; i++) {
      const a = o.refs[i]!,
        b = o.refs[i + 1]!;
      if (a === b || !o.found[a] || !o.found[b]) continue;
      const d = haversineMeters({ lat: o.lat[a]!, lng: o.lon[a]! }, { lat: o.lat[b]!, lng: o.lon[b]! });
      const ms = Math.max(1, Math.round((d / mps) * 1000));
      const add = (t: number, h: number) => {
        bTail.push(t);
        bHead.push(h);
        bWay.push(w);
        bDist.push(d);
        bMs.push(ms);
        return bTail.length - 1;
      };
      segA.push(a);
      segB.push(b);
      segFwd.push(ow >= 0 ? add(a, b) : -1);
      segBwd.push(ow <= 0 ? add(b, a) : -1);
    }
  }
  const base = { tail: bTail.view(), head: bHead.view(), way: bWay.view() };
  log('restrictions');
  const edgesOf = edgesByWay(o.wayCls.length, base.way);
  const viaNode = resolveRestrictions(o, base, edgesOf);
  const { restrictions: viaWayRestrictions, ...viaWay } = resolveViaWayRestrictions(o, base, edgesOf);
  // Via-node restrictions split their junctions; via-way ones then duplicate their via paths in the split graph
  // (via-way.ts; without any, the split graph as it is).
  const split = applyViaWayRestrictions(nb, base, splitRestrictedNodes(nb, base, viaNode), viaWayRestrictions);
  const n = split.nodes,
    m = split.tail.length;
  log('graph');
  // 2. CSR by tail (counting sort); pos[graphEdgeIndexBeforeSort] = index after.
  const first = new Uint32Array(n + 1);
  for (let i = 0; i < m; i++) first[split.tail[i]! + 1]!++;
  for (let u = 0; u < n; u++) first[u + 1]! += first[u]!;
  const fill = first.slice(0, n);
  const head = new Uint32Array(m),
    ms = new Uint32Array(m),
    dist = new Float32Array(m),
    way = new Uint32Array(m);
  const pos = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    const at = fill[split.tail[i]!]!++;
    const be = split.base[i]!;
    pos[i] = at;
    head[at] = split.head[i]!;
    ms[at] = bMs.view()[be]!;
    dist[at] = bDist.view()[be]!;
    way[at] = bWay.view()[be]!;
  }
  const lat = new Float64Array(n),
    lon = new Float64Array(n);
  lat.set(o.lat);
  lon.set(o.lon);
  split.copyBase.forEach((b, i) => {
    lat[nb + i] = o.lat[b]!;
    lon[nb + i] = o.lon[b]!;
  });
  // 3. Segment -> graph edges, both directions (a split junction has several copies of one physical segment).
  const nbe = bTail.length;
  const beFirst = new Uint32Array(nbe + 1);
  for (let i = 0; i < m; i++) beFirst[split.base[i]! + 1]!++;
  for (let i = 0; i < nbe; i++) beFirst[i + 1]! += beFirst[i]!;
  const beFill = beFirst.slice(0, nbe),
    beEdges = new Uint32Array(m);
  for (let i = 0; i < m; i++) beEdges[beFill[split.base[i]!]!++] = pos[i]!;
  const S = segA.length;
  const segFirst = new Uint32Array(2 * S + 1);
  const segEdges = new GrowU32();
  const pushAll = (be: number) => {
    if (be >= 0) for (let k = beFirst[be]!; k < beFirst[be + 1]!; k++) segEdges.push(beEdges[k]!);
  };
  for (let s = 0; s < S; s++) {
    pushAll(segFwd.view()[s]!);
    segFirst[2 * s + 1] = segEdges.length;
    pushAll(segBwd.view()[s]!);
    segFirst[2 * s + 2] = segEdges.length;
  }
  return {
    ...{ nb, n, m, S, first, head, ms, dist, way, lat, lon, segFirst, split, viaWay },
    ...{ segA: segA.view(), segB: segB.view(), segEdges: segEdges.view() },
  };
}

/** Base edges by way (CSR): edgesOf(w) lists way w's base edges in order. */
function edgesByWay(ways: number, way: Uint32Array): (w: number) => Uint32Array {
  const wFirst = new Uint32Array(ways + 1);
  for (let i = 0; i < way.length; i++) wFirst[way[i]! + 1]!++;
  for (let w = 0; w < ways; w++) wFirst[w + 1]! += wFirst[w]!;
  const wEdges = new Uint32Array(way.length);
  const fill = wFirst.slice(0, ways);
  for (let i = 0; i < way.length; i++) wEdges[fill[way[i]!]!++] = i;
  return (w) => wEdges.subarray(wFirst[w], wFirst[w + 1]);
}

/** Maps OSM via-node restriction relations to base edges at the via node (both ends of a from-/to-way that touch it). */
function resolveRestrictions(
  o: OsmRoads,
  e: { tail: Uint32Array; head: Uint32Array; way: Uint32Array },
  edgesOf: (w: number) => Uint32Array,
): Restriction[] {
  const out: Restriction[] = [];
  for (const r of o.restrictions) {
    if (r.viaWays) continue;
    const fw = o.wayIndexByOsmId.get(r.fromWay),
      tw = o.wayIndexByOsmId.get(r.toWay);
    if (fw === undefined || tw === undefined) continue;
    const via = indexOfSorted(o.nodeIds, r.viaNode);
    if (via < 0) continue;
    const from = Array.from(edgesOf(fw)).filter((i) => e.head[i] === via);
    const to = Array.from(edgesOf(tw)).filter((i) => e.tail[i] === via);
    if (from.length && to.length) out.push({ via, from, to, only: r.only });
  }
  return out;
}
