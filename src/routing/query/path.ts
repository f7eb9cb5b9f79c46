import { lowerBound } from '../../core/sorted.js';
import type { RoadGraph } from '../road-graph.js';
import { LOOK, ZERO_M } from '../answer/junction.js';

const LOOK_BOTH = LOOK | (LOOK << 8);
import type { Snap } from './snap.js';

/**
 * A route as struct-of-arrays pieces. Piece i runs from point i to point i + 1 of `pts`, and is a whole chain
 * (road-graph.ts ChainArrays: the road between two junctions), one road edge, or the partial segment from/to a snapped
 * point. A cross-country route drives ~10^3 chains of ~10^4 road edges: built of chains, it reads a chain's end and
 * its summary (route-summary.ts), and its road edges only where the line (linePoints) or a maneuver needs them.
 */
export interface RoutePath {
  n: number;
  /** The chain piece i drives whole, or -1 when it is one road edge or part of one. */
  chain: Int32Array;
  /**
   * What a maneuver says where a chain piece starts (its turn's route-summary.ts tSay, read with the chain), or
   * LOOK in both languages (0xffff) where the route must look (the others).
   */
  say: Uint16Array;
  /** How far a chain piece's inner points stray from its chord (route-summary.ts cDev; 0 for the others). */
  dev: Float32Array;
  /** The way of a piece of one road edge (0 for a chain: maneuvers.ts reads its road edges' ways). */
  way: Uint32Array;
  /** The graph node at its end (-1 for a final partial piece ending at the destination). */
  node: Int32Array;
  dist: Float64Array;
  time: Float64Array;
  /** [lng0, lat0, lng1, lat1, ...]: n + 1 points, the pieces' ends. */
  pts: Float64Array;
  /**
   * The chains it follows in order, for overlap tests between alternatives; for a route that passes no junction,
   * its road edges.
   */
  edges: Uint32Array;
  /**
   * The node behind the snapped origin on its road edge, and the node ahead of the snapped destination on its (-1
   * when not known): the roads a maneuver at the first or last junction must not offer as other ways to go.
   */
  behind: number;
  toward: number;
  distM: number;
  ms: number;
}

/** A path's per-piece arrays. */
export type PathArrays = Pick<RoutePath, 'chain' | 'say' | 'dev' | 'way' | 'node' | 'dist' | 'time' | 'pts'>;

/**
 * A RoutePath from its parts. Every path is made here, by this one literal (PathBuilder's, and a path another
 * thread handed over in a slab), so all have one hidden class: a routing thread that saw paths of two shapes
 * deoptimised maneuvers() and the writers over and over ("wrong map"), each time ~60 ms of recompiling on a core
 * the routes needed (at 600 copies, 0.8 s of compiling in 600 long routes).
 */
export function routePath(
  n: number,
  a: PathArrays,
  edges: Uint32Array,
  behind: number,
  toward: number,
  distM: number,
  ms: number,
): RoutePath {
  const { chain, say, dev, way, node, dist, time, pts } = a;
  return { n, chain, say, dev, way, node, dist, time, pts, edges, behind, toward, distM, ms };
}

/** Bytes of the arrays of a path of n pieces (pathArraysIn). */
export const pathArraysBytes = (n: number) => 8 * (4 * n + 2) + 4 * (4 * n) + 2 * n;

/**
 * The arrays of a path of n pieces as views of `buf` from byte `at` (8-aligned), pathArraysBytes(n) of them:
 * 8-byte arrays first, then 4-byte, then 2-byte, so each is aligned.
 */
export function pathArraysIn(buf: ArrayBufferLike, at: number, n: number): PathArrays {
  const take = <T extends { byteLength: number }>(
    Ctor: new (b: ArrayBufferLike, offset: number, length: number) => T,
    length: number,
  ): T => {
    const a = new Ctor(buf, at, length);
    at += a.byteLength;
    return a;
  };
  return {
    dist: take(Float64Array, n),
    time: take(Float64Array, n),
    pts: take(Float64Array, 2 * n + 2),
    chain: take(Int32Array, n),
    dev: take(Float32Array, n),
    way: take(Uint32Array, n),
    node: take(Int32Array, n),
    say: take(Uint16Array, n),
  };
}

/** Graph edges of segment `seg` driven b -> a (`bwd`) or a -> b, as a range of segEdges. */
export const segEdgeRange = (g: RoadGraph, seg: number, bwd: boolean) =>
  [g.segFirst[2 * seg + (bwd ? 1 : 0)]!, g.segFirst[2 * seg + (bwd ? 2 : 1)]!] as const;

/** The edge's tail (edges are stored by tail in CSR: the last node whose out-edges start at or before it). */
export const tailOf = (g: RoadGraph, e: number): number => lowerBound(g.first, e + 1) - 1;

/** Snapped points to OSM's own precision (1e-7 degree, ~1 cm). */
const r7 = (x: number) => Math.round(x * 1e7) / 1e7;

type Piece = [
  way: number,
  distM: number,
  ms: number,
  fromLng: number,
  fromLat: number,
  toLng: number,
  toLat: number,
  node: number,
];

/** Collects pieces in driving order; pieces of (almost) zero length carry no geometry and would confuse bearings. */
class PathBuilder {
  private cap: number;
  private p: RoutePath;
  /** The first piece offered, kept in case every piece turns out zero-length (a route of one point). */
  private first: Piece | undefined;
  /** Turn time not yet on a piece: it goes on the next piece kept. */
  carry = 0;
  /** RoutePath.behind and .toward. */
  behind = -1;
  toward = -1;

  constructor(cap: number, edges: Uint32Array) {
    this.cap = Math.max(1, cap);
    this.p = routePath(0, PathBuilder.arrays(this.cap), edges, -1, -1, 0, 0);
  }

  /**
   * The arrays for `cap` pieces, in one buffer: each typed array of a few KB is a backing store of its own outside
   * V8's heap, allocated, zeroed and later swept apart, three paths a route (eight of them were ~4% of a local
   * route's CPU at 600 copies).
   */
  private static arrays(cap: number): PathArrays {
    return pathArraysIn(new ArrayBuffer(pathArraysBytes(cap)), 0, cap);
  }

  /** A piece that is not a whole road edge: from one point to another, ending at `node` (-1: at the destination). */
  add(...piece: Piece) {
    this.first ??= piece;
    if (piece[1] > ZERO_M) this.put(-1, ...piece);
  }

  /** Road edges `edges` in order, a connected run from node `from`. */
  edges(g: RoadGraph, edges: ArrayLike<number>, from: number) {
    const { head, lon, lat, way, dist, ms } = g;
    let fx = lon[from]!,
      fy = lat[from]!;
    for (let k = 0; k < edges.length; k++) {
      const e = edges[k]!,
        h = head[e]!,
        tx = lon[h]!,
        ty = lat[h]!;
      this.first ??= [way[e]!, dist[e]!, ms[e]!, fx, fy, tx, ty, h];
      if (dist[e]! > ZERO_M) this.put(-1, way[e]!, dist[e]!, ms[e]!, fx, fy, tx, ty, h);
      fx = tx;
      fy = ty;
    }
  }

  /**
   * Chains `chains` whole, in order, from the junction node `from`; turns[i] leads onto chains[i]. Reads of each
   * chain the junction it ends at and its length (one cache line, route-summary.ts cEnd), its time and deviation,
   * and what its turn says: the chains lie all over the graph's arrays, so these reads are most of the cost, and
   * read in one loop they are in flight together (the line and the maneuvers read them here later).
   */
  chains(g: RoadGraph, chains: Uint32Array, turns: Uint32Array, from: number) {
    const k = chains.length;
    while (this.cap < this.p.n + k) this.grow();
    const p = this.p,
      n0 = p.n;
    const { cEnd, cMs, cDev, tMs, tSay, lon, lat } = g;
    const { chain, say, dev, node, dist, time, pts, way } = p;
    if (n0 === 0) {
      pts[0] = lon[from]!;
      pts[1] = lat[from]!;
    }
    for (let i = 0; i < k; i++) {
      const c = chains[i]!,
        at = n0 + i;
      chain[at] = c;
      way[at] = 0;
      time[at] = cMs[c]! + tMs[turns[i]!]!;
      say[at] = tSay[turns[i]!]!;
      dev[at] = cDev[c]!;
      pts[2 * at + 2] = cEnd[4 * c]!;
      pts[2 * at + 3] = cEnd[4 * c + 1]!;
      node[at] = cEnd[4 * c + 2]!;
      dist[at] = cEnd[4 * c + 3]!;
    }
    let distM = 0,
      ms = 0;
    for (let i = n0; i < n0 + k; i++) {
      distM += dist[i]!;
      ms += time[i]!;
    }
    if (k > 0) {
      time[n0]! += this.carry;
      ms += this.carry;
      this.carry = 0;
    }
    p.n += k;
    p.distM += distM;
    p.ms += ms;
  }

  private grow(): void {
    const old = this.p,
      a = PathBuilder.arrays((this.cap *= 2));
    for (const k of Object.keys(a) as Array<keyof typeof a>) a[k].set(old[k]);
    this.p = routePath(old.n, a, old.edges, old.behind, old.toward, old.distM, old.ms);
  }

  /** Appends a piece; its time takes the carried turn time. */
  private put(chain: number, ...[way, distM, ms, fromLng, fromLat, toLng, toLat, node]: Piece): void {
    if (this.p.n === this.cap) this.grow();
    const p = this.p,
      i = p.n++;
    if (i === 0) {
      p.pts[0] = fromLng;
      p.pts[1] = fromLat;
    }
    p.chain[i] = chain;
    p.say[i] = LOOK_BOTH;
    p.dev[i] = 0;
    p.way[i] = way;
    p.node[i] = node;
    p.dist[i] = distM;
    p.time[i] = ms + this.carry;
    p.pts[2 * i + 2] = toLng;
    p.pts[2 * i + 3] = toLat;
    p.distM += distM;
    p.ms += ms + this.carry;
    this.carry = 0;
  }

  done(): RoutePath {
    // every piece was (almost) zero-length: one point, as the first piece offered gives it
    if (this.p.n === 0 && this.first) this.put(-1, ...this.first);
    const p = this.p;
    if (this.carry && p.n) {
      // time left over after the last piece (a turn onto a destination at the junction itself)
      p.time[p.n - 1]! += this.carry;
      p.ms += this.carry;
    }
    const n = p.n;
    return {
      ...p,
      behind: this.behind,
      toward: this.toward,
      chain: p.chain.subarray(0, n),
      say: p.say.subarray(0, n),
      dev: p.dev.subarray(0, n),
      way: p.way.subarray(0, n),
      node: p.node.subarray(0, n),
      dist: p.dist.subarray(0, n),
      time: p.time.subarray(0, n),
      pts: p.pts.subarray(0, 2 * n + 2),
    };
  }
}

/** The partial piece between a snapped point and a segment end node, in driving order. */
function partial(g: RoadGraph, s: Snap, node: number, atStart: boolean, out: PathBuilder): void {
  const [i0, i1] = segEdgeRange(g, s.seg, false);
  const [j0, j1] = segEdgeRange(g, s.seg, true);
  const px = r7(s.lon),
    py = r7(s.lat);
  const nx = g.lon[node]!,
    ny = g.lat[node]!;
  // Which direction of the segment is driven: the node is `b` (fwd) when it has b's coordinates.
  const isB = nx === g.lon[g.segB[s.seg]!] && ny === g.lat[g.segB[s.seg]!];
  let fwd = atStart ? isB : !isB;
  // a zero-length segment (two OSM nodes at one position) cannot tell its direction by coordinates
  if ((fwd ? i1 - i0 : j1 - j0) === 0) fwd = !fwd;
  if ((fwd ? i1 - i0 : j1 - j0) === 0) throw new Error('snapped segment has no drivable edge');
  const e = g.segEdges[fwd ? i0 : j0]!;
  const frac = fwd === atStart ? 1 - s.t : s.t;
  if (atStart) {
    out.add(g.way[e]!, frac * g.dist[e]!, frac * g.ms[e]!, px, py, nx, ny, node);
    out.behind = tailOf(g, e);
  } else {
    out.add(g.way[e]!, frac * g.dist[e]!, frac * g.ms[e]!, nx, ny, px, py, -1);
    out.toward = g.head[e]!;
  }
}

/**
 * A route of road edges: from the snapped origin to the source seed node, the graph edges `edges` between (a
 * connected run), and from the target seed node to the snapped destination.
 */
export function assemble(
  g: RoadGraph,
  from: Snap,
  to: Snap,
  sNode: number,
  edges: Uint32Array,
  tNode: number,
): RoutePath {
  const b = new PathBuilder(edges.length + 2, edges);
  partial(g, from, sNode, true, b);
  b.edges(g, edges, sNode);
  partial(g, to, tNode, false, b);
  return b.done();
}

/**
 * A route over chains: from the snapped origin to node `sNode` and on over the road edges `before` to the junction
 * the chains start at, over the chains `chains` (turns[i] leads onto chains[i]), then `lastTurnMs` more and over the
 * road edges `after` to node `tNode`, and on to the snapped destination. Its `edges` are its chains.
 */
export function assembleChains(
  g: RoadGraph,
  from: Snap,
  to: Snap,
  sNode: number,
  before: ArrayLike<number>,
  turns: Uint32Array,
  chains: Uint32Array,
  lastTurnMs: number,
  after: ArrayLike<number>,
  tNode: number,
): RoutePath {
  const b = new PathBuilder(before.length + turns.length + after.length + 2, chains);
  partial(g, from, sNode, true, b);
  b.edges(g, before, sNode);
  const start = before.length ? g.head[before[before.length - 1]!]! : sNode;
  b.chains(g, chains, turns, start);
  b.carry += lastTurnMs;
  b.edges(g, after, chains.length ? g.cEnd[4 * chains[chains.length - 1]! + 2]! : start);
  partial(g, to, tNode, false, b);
  return b.done();
}

/** Origin and destination on the same segment, destination ahead in a drivable direction. */
export function directPath(g: RoadGraph, from: Snap, to: Snap): RoutePath | undefined {
  if (from.seg !== to.seg) return undefined;
  const bwd = from.t > to.t;
  const [i0, i1] = segEdgeRange(g, from.seg, bwd);
  if (i0 === i1) return undefined;
  const e = g.segEdges[i0]!;
  const frac = Math.abs(to.t - from.t);
  const b = new PathBuilder(1, new Uint32Array(0));
  b.add(g.way[e]!, frac * g.dist[e]!, frac * g.ms[e]!, r7(from.lon), r7(from.lat), r7(to.lon), r7(to.lat), -1);
  return b.done();
}

/** Line points in a thread scratch (one line at a time a thread), grown to the longest line so far. */
let linePts = new Float64Array(1 << 15);

/**
 * The points of p's line: the pieces' ends, and between them the inner points of every chain that strays more than
 * `minDev` from its chord (cDev, route-summary.ts); every point with minDev < 0. In the thread scratch, valid until
 * the next call.
 */
export function linePoints(g: RoadGraph, p: RoutePath, minDev: number): { pts: Float64Array; count: number } {
  const { chain, dev, pts } = p,
    { cEdgeFirst, cEdges, head, dist, lon, lat } = g;
  let room = p.n + 1;
  for (let i = 0; i < p.n; i++) {
    const c = chain[i]!;
    if (c >= 0 && dev[i]! > minDev) room += cEdgeFirst[c + 1]! - cEdgeFirst[c]! - 1;
  }
  if (linePts.length < 2 * room) linePts = new Float64Array(Math.max(2 * room, 2 * linePts.length));
  const out = linePts;
  out[0] = pts[0]!;
  out[1] = pts[1]!;
  let m = 1;
  for (let i = 0; i < p.n; i++) {
    const c = chain[i]!;
    if (c >= 0 && dev[i]! > minDev)
      // the heads of its road edges but the last (the piece's end), those with geometry (as pieces of edges keep)
      for (let k = cEdgeFirst[c]!, end = cEdgeFirst[c + 1]! - 1; k < end; k++) {
        const e = cEdges[k]!;
        if (dist[e]! <= ZERO_M) continue;
        out[2 * m] = lon[head[e]!]!;
        out[2 * m + 1] = lat[head[e]!]!;
        m++;
      }
    out[2 * m] = pts[2 * i + 2]!;
    out[2 * m + 1] = pts[2 * i + 3]!;
    m++;
  }
  return { pts: out, count: m };
}
