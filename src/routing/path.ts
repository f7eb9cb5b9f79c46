import type { Seed } from './ch-query.js';
import type { RoadGraph } from './graph.js';
import type { Snap } from './snap.js';

/** One drivable piece of a route: a whole graph edge, or the partial segment from/to a snapped point. */
export interface Piece {
  way: number;
  distM: number;
  ms: number;
  from: [number, number]; // [lng, lat]
  to: [number, number];
  /** Graph node at the end of the piece (-1 for the final partial piece ending at the destination). */
  node: number;
}

export interface RoutePath {
  pieces: Piece[];
  /** Graph edges in order (for overlap tests between alternatives). */
  edges: number[];
  distM: number;
  ms: number;
}

const segEdgeRange = (g: RoadGraph, seg: number, bwd: boolean) =>
  [g.segFirst[2 * seg + (bwd ? 1 : 0)]!, g.segFirst[2 * seg + (bwd ? 2 : 1)]!] as const;

/** The edge's tail (edges are stored by tail in CSR, so a binary search over `first` finds it). */
export function tailOf(g: RoadGraph, e: number): number {
  let lo = 0,
    hi = g.first.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (g.first[mid]! <= e) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Snapped points to OSM's own precision (1e-7 degree, ~1 cm). */
const r7 = (x: number) => Math.round(x * 1e7) / 1e7;

export const coord = (g: RoadGraph, v: number): [number, number] => [g.lon[v]!, g.lat[v]!];

/** Where a route may start from a snapped origin: the far end of the segment in each drivable direction. */
export function sourceSeeds(g: RoadGraph, s: Snap): Seed[] {
  const out: Seed[] = [];
  for (const bwd of [false, true]) {
    const [i0, i1] = segEdgeRange(g, s.seg, bwd);
    if (i0 === i1) continue;
    const e = g.segEdges[i0]!;
    out.push([g.head[e]!, (bwd ? s.t : 1 - s.t) * g.ms[e]!]);
  }
  return out;
}

/** Where a route may end: every graph node (junction copies included) with an edge onto the snapped segment. */
export function targetSeeds(g: RoadGraph, s: Snap): Seed[] {
  const out: Seed[] = [];
  for (const bwd of [false, true]) {
    const [i0, i1] = segEdgeRange(g, s.seg, bwd);
    for (let i = i0; i < i1; i++) {
      const e = g.segEdges[i]!;
      out.push([tailOf(g, e), (bwd ? 1 - s.t : s.t) * g.ms[e]!]);
    }
  }
  return out;
}

/** The partial piece between a snapped point and a segment end node, in driving order. */
function partial(g: RoadGraph, s: Snap, node: number, atStart: boolean): Piece {
  const [i0, i1] = segEdgeRange(g, s.seg, false);
  const [j0, j1] = segEdgeRange(g, s.seg, true);
  const p: [number, number] = [r7(s.lon), r7(s.lat)];
  const nc = coord(g, node);
  // Which direction of the segment is driven: the node is `b` (fwd) when it has b's coordinates.
  const isB = nc[0] === g.lon[g.segB[s.seg]!] && nc[1] === g.lat[g.segB[s.seg]!];
  let fwd = atStart ? isB : !isB;
  // a zero-length segment (two OSM nodes at one position) cannot tell its direction by coordinates
  if ((fwd ? i1 - i0 : j1 - j0) === 0) fwd = !fwd;
  if ((fwd ? i1 - i0 : j1 - j0) === 0) throw new Error('snapped segment has no drivable edge');
  const e = g.segEdges[fwd ? i0 : j0]!;
  const frac = fwd === atStart ? 1 - s.t : s.t;
  return {
    way: g.way[e]!,
    distM: frac * g.dist[e]!,
    ms: frac * g.ms[e]!,
    from: atStart ? p : nc,
    to: atStart ? nc : p,
    node: atStart ? node : -1,
  };
}

/** Assembles a full route from the source seed node, the graph edges between, and the target seed node. */
export function assemble(g: RoadGraph, from: Snap, to: Snap, sNode: number, edges: number[], tNode: number): RoutePath {
  const pieces: Piece[] = [partial(g, from, sNode, true)];
  let prev = sNode;
  for (const e of edges) {
    const h = g.head[e]!;
    pieces.push({ way: g.way[e]!, distM: g.dist[e]!, ms: g.ms[e]!, from: coord(g, prev), to: coord(g, h), node: h });
    prev = h;
  }
  pieces.push(partial(g, to, tNode, false));
  return finishPath(pieces, edges);
}

/** Origin and destination on the same segment, destination ahead in a drivable direction. */
export function directPath(g: RoadGraph, from: Snap, to: Snap): RoutePath | undefined {
  if (from.seg !== to.seg) return undefined;
  const bwd = from.t > to.t;
  const [i0, i1] = segEdgeRange(g, from.seg, bwd);
  if (i0 === i1) return undefined;
  const e = g.segEdges[i0]!;
  const frac = Math.abs(to.t - from.t);
  return finishPath(
    [
      {
        way: g.way[e]!,
        distM: frac * g.dist[e]!,
        ms: frac * g.ms[e]!,
        from: [r7(from.lon), r7(from.lat)],
        to: [r7(to.lon), r7(to.lat)],
        node: -1,
      },
    ],
    [],
  );
}

function finishPath(all: Piece[], edges: number[]): RoutePath {
  // Zero-length partial pieces (a snap exactly on a node) carry no geometry and would confuse bearings.
  const pieces = all.filter((p) => p.distM > 0.01);
  if (!pieces.length) pieces.push(all[0]!);
  let distM = 0,
    ms = 0;
  for (const p of pieces) {
    distM += p.distM;
    ms += p.ms;
  }
  return { pieces, edges, distM, ms };
}

/** The route polyline: each piece's end point, after the start; repeated points dropped. */
export function polyline(p: RoutePath): Array<[number, number]> {
  const out: Array<[number, number]> = [p.pieces[0]!.from];
  for (const x of p.pieces) {
    const last = out[out.length - 1]!;
    if (last[0] !== x.to[0] || last[1] !== x.to[1]) out.push(x.to);
  }
  if (out.length === 1) out.push(out[0]!);
  return out;
}
