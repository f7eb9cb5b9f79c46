import { lowerBound } from '../core/sorted.js';
import type { RoadGraph } from './graph.js';
import type { Snap } from './snap.js';

/**
 * A route as struct-of-arrays pieces (a long route has thousands; one object per piece was most of its cost).
 * Piece i is a whole graph edge, or the partial segment from/to a snapped point, and runs from point i to point
 * i + 1 of `pts`. `node[i]` is the graph node at its end (-1 for a final partial piece ending at the destination).
 */
export interface RoutePath {
  n: number;
  way: Uint32Array;
  node: Int32Array;
  dist: Float64Array;
  time: Float64Array;
  /** [lng0, lat0, lng1, lat1, ...]: n + 1 points. */
  pts: Float64Array;
  /**
   * The chains it follows in order (graph.ts ChainArrays), for overlap tests between alternatives; for a route that
   * passes no junction, its road edges.
   */
  edges: Uint32Array;
  distM: number;
  ms: number;
}

/** Graph edges of segment `seg` driven b -> a (`bwd`) or a -> b, as a range of segEdges. */
export const segEdgeRange = (g: RoadGraph, seg: number, bwd: boolean) =>
  [g.segFirst[2 * seg + (bwd ? 1 : 0)]!, g.segFirst[2 * seg + (bwd ? 2 : 1)]!] as const;

/** The edge's tail (edges are stored by tail in CSR: the last node whose out-edges start at or before it). */
export const tailOf = (g: RoadGraph, e: number): number => lowerBound(g.first, e + 1) - 1;

/** Snapped points to OSM's own precision (1e-7 degree, ~1 cm). */
const r7 = (x: number) => Math.round(x * 1e7) / 1e7;

/**
 * Scratch pieces, one set per thread (assembling is synchronous): PathBuilder gathers a route's pieces here and
 * copies them out at their exact count. Module constants, because V8 compiles the gathering loop (see
 * gatherEdges) over them into one that keeps far more of its cache misses in flight than over arrays held in
 * fields: the graph's per-edge and per-node arrays are read at random. 64K pieces (~2.5 MB); a longer route is
 * built in arrays of its own.
 */
const PIECES = 1 << 16;
const P_WAY = new Uint32Array(PIECES);
const P_NODE = new Int32Array(PIECES);
const P_DIST = new Float64Array(PIECES);
const P_TIME = new Float64Array(PIECES);
const P_PTS = new Float64Array(2 * PIECES + 2);
let piecesLimit = PIECES;

/** Tests: a lower limit for routes gathered in the scratch pieces (down to 0), so others get their own arrays. */
export function setPathScratchLimit(n: number): void {
  piecesLimit = Math.max(0, Math.min(PIECES, n));
}

/**
 * PathBuilder.add for each of `edges` (a connected run from node `prev`) into the scratch pieces, after `n` pieces
 * summing to distM / ms, each edge taking `extra[k]` ms more (a turn made before it), and the first piece kept
 * `carry` ms more (turns before edges too short to be pieces). Each piece starts where the previous edge ended, so
 * every node's coordinates are read once.
 */
function gatherEdges(
  g: RoadGraph,
  edges: Uint32Array,
  extra: Uint32Array,
  prev: number,
  n: number,
  distM: number,
  ms: number,
  carry: number,
) {
  const { head, lon, lat } = g,
    gWay = g.way,
    gDist = g.dist,
    gMs = g.ms;
  let fx = lon[prev]!,
    fy = lat[prev]!;
  for (let k = 0; k < edges.length; k++) {
    const e = edges[k]!,
      h = head[e]!,
      tx = lon[h]!,
      ty = lat[h]!,
      d = gDist[e]!;
    carry += extra[k]!;
    if (!(d <= 0.01)) {
      const t = gMs[e]! + carry;
      carry = 0;
      if (n === 0) {
        P_PTS[0] = fx;
        P_PTS[1] = fy;
      }
      P_WAY[n] = gWay[e]!;
      P_NODE[n] = h;
      P_DIST[n] = d;
      P_TIME[n] = t;
      P_PTS[2 * n + 2] = tx;
      P_PTS[2 * n + 3] = ty;
      distM += d;
      ms += t;
      n++;
    }
    fx = tx;
    fy = ty;
  }
  return { n, distM, ms, carry };
}

/** Collects pieces in driving order; pieces of (almost) zero length carry no geometry and would confuse bearings. */
class PathBuilder {
  private readonly p: RoutePath;
  /** Whether the pieces are gathered in the scratch arrays (copied out by done). */
  private readonly scratch: boolean;
  constructor(cap: number, edges: Uint32Array) {
    this.scratch = cap <= piecesLimit;
    this.p = {
      n: 0,
      way: this.scratch ? P_WAY : new Uint32Array(cap),
      node: this.scratch ? P_NODE : new Int32Array(cap),
      dist: this.scratch ? P_DIST : new Float64Array(cap),
      time: this.scratch ? P_TIME : new Float64Array(cap),
      pts: this.scratch ? P_PTS : new Float64Array(2 * cap + 2),
      edges,
      distM: 0,
      ms: 0,
    };
  }
  /** The first piece offered, kept in case every piece turns out zero-length (a route of one point). */
  private first: Parameters<PathBuilder['add']> | undefined;
  /** Turn time not yet on a piece: it goes on the next piece kept. */
  carry = 0;
  add(
    way: number,
    distM: number,
    ms: number,
    fromLng: number,
    fromLat: number,
    toLng: number,
    toLat: number,
    node: number,
  ) {
    this.first ??= [way, distM, ms, fromLng, fromLat, toLng, toLat, node];
    if (distM <= 0.01) return;
    this.put(way, distM, ms, fromLng, fromLat, toLng, toLat, node);
  }
  private put(
    way: number,
    distM: number,
    ms: number,
    fromLng: number,
    fromLat: number,
    toLng: number,
    toLat: number,
    node: number,
  ) {
    const p = this.p,
      i = p.n++;
    if (i === 0) {
      p.pts[0] = fromLng;
      p.pts[1] = fromLat;
    }
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
  /**
   * `add` for each of `edges` (a connected run starting at node `prev`; a long route has ~10^4 of them), each
   * taking `extra[k]` ms more (the turn made before it).
   */
  addEdges(g: RoadGraph, edges: Uint32Array, extra: Uint32Array, prev: number) {
    const p = this.p;
    if (this.first === undefined && edges.length > 0) {
      const e = edges[0]!,
        h = g.head[e]!;
      this.first = [g.way[e]!, g.dist[e]!, g.ms[e]!, g.lon[prev]!, g.lat[prev]!, g.lon[h]!, g.lat[h]!, h];
    }
    if (this.scratch) {
      const r = gatherEdges(g, edges, extra, prev, p.n, p.distM, p.ms, this.carry);
      p.n = r.n;
      p.distM = r.distM;
      p.ms = r.ms;
      this.carry = r.carry;
      return;
    }
    let fx = g.lon[prev]!,
      fy = g.lat[prev]!;
    for (let k = 0; k < edges.length; k++) {
      const e = edges[k]!,
        h = g.head[e]!,
        tx = g.lon[h]!,
        ty = g.lat[h]!;
      this.carry += extra[k]!;
      if (!(g.dist[e]! <= 0.01)) this.put(g.way[e]!, g.dist[e]!, g.ms[e]!, fx, fy, tx, ty, h);
      fx = tx;
      fy = ty;
    }
  }
  done(): RoutePath {
    const p = this.p;
    if (p.n === 0 && this.first) this.put(...this.first);
    if (this.carry && p.n) {
      // time left over after the last piece (a turn onto a destination at the junction itself)
      p.time[p.n - 1]! += this.carry;
      p.ms += this.carry;
    }
    if (!this.scratch) return p;
    const n = p.n;
    return {
      n,
      way: P_WAY.slice(0, n),
      node: P_NODE.slice(0, n),
      dist: P_DIST.slice(0, n),
      time: P_TIME.slice(0, n),
      pts: P_PTS.slice(0, 2 * n + 2),
      edges: p.edges,
      distM: p.distM,
      ms: p.ms,
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
  if (atStart) out.add(g.way[e]!, frac * g.dist[e]!, frac * g.ms[e]!, px, py, nx, ny, node);
  else out.add(g.way[e]!, frac * g.dist[e]!, frac * g.ms[e]!, nx, ny, px, py, -1);
}

/**
 * Assembles a full route from the source seed node, the graph edges between, and the target seed node. `extra`
 * (edges.length + 1 entries, when given) is the time of turns: extra[k] is made before edge k, the last one before
 * the final partial piece.
 */
export function assemble(
  g: RoadGraph,
  from: Snap,
  to: Snap,
  sNode: number,
  edges: Uint32Array,
  tNode: number,
  extra: Uint32Array = new Uint32Array(edges.length + 1),
): RoutePath {
  const b = new PathBuilder(edges.length + 2, edges);
  partial(g, from, sNode, true, b);
  b.addEdges(g, edges, extra, sNode);
  b.carry += extra[edges.length]!;
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

/** The most bytes writeLine() writes for `p`. */
export const lineBytesMax = (p: RoutePath): number => 8 + 2 * (p.n + 2) * 24;

/**
 * Writes the route line as the JSON text of its coordinates array (`[[lng,lat],...]`, repeated points dropped) into
 * `buf` at `at` (lineBytesMax(p) bytes must be free; `view` is a DataView over buf) and returns where it ended. Done
 * here in the routing thread, so the answer carries the bytes as they are sent (route-record.ts). Coordinates at
 * OSM's own precision, 7 decimals, written as ASCII digits straight into the buffer: a cross-country route has tens
 * of thousands of numbers, and formatting them one string at a time was the largest single cost of answering it.
 * `keep` (indices of `pts`, in order): only those points (the simplified overview, overview.ts).
 */
export function writeLine(p: RoutePath, buf: Buffer, view: DataView, at: number, keep?: Uint32Array): number {
  const pts = p.pts;
  buf[at++] = 0x5b; // [
  let lx = NaN,
    ly = NaN,
    count = 0;
  const points = keep ? keep.length : p.n + 1;
  for (let k = 0; k < points; k++) {
    const i = keep ? keep[k]! : k;
    const x = Math.round(pts[2 * i]! * 1e7),
      y = Math.round(pts[2 * i + 1]! * 1e7);
    if (x === lx && y === ly) continue;
    at = writePoint(buf, view, at, x, y, count++ > 0);
    lx = x;
    ly = y;
  }
  if (count === 1) at = writePoint(buf, view, at, lx, ly, true);
  buf[at++] = 0x5d; // ]
  return at;
}

/** The line's JSON text as a string (tests and benchmarks; answers use writeLine through route-record.ts). */
export function lineJson(p: RoutePath, keep?: Uint32Array): string {
  const buf = Buffer.allocUnsafe(lineBytesMax(p));
  const end = writeLine(p, buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 0, keep);
  return buf.toString('latin1', 0, end);
}

/** `,[x,y]` (comma when `comma`) for coordinates in units of 1e-7 degree. */
function writePoint(buf: Buffer, view: DataView, at: number, x: number, y: number, comma: boolean): number {
  if (comma) buf[at++] = 0x2c;
  buf[at++] = 0x5b;
  at = writeFixed7(buf, view, at, x);
  buf[at++] = 0x2c;
  at = writeFixed7(buf, view, at, y);
  buf[at++] = 0x5d;
  return at;
}

/** DIGITS4[k]: k (0..9999) as four ASCII digits, in the byte order of a little-endian 32-bit store. */
const DIGITS4 = new Uint32Array(10000);
for (let k = 0; k < 10000; k++)
  DIGITS4[k] =
    (0x30 + Math.floor(k / 1000)) |
    ((0x30 + (Math.floor(k / 100) % 10)) << 8) |
    ((0x30 + (Math.floor(k / 10) % 10)) << 16) |
    ((0x30 + (k % 10)) << 24);

/** INT_TEXT[k]: k (0..999) as ASCII digits in the byte order of a little-endian 32-bit store; INT_LEN[k] of them. */
const INT_TEXT = new Uint32Array(1000);
const INT_LEN = new Uint8Array(1000);
for (let k = 0; k < 1000; k++) {
  const t = String(k);
  for (let j = 0; j < t.length; j++) INT_TEXT[k]! |= t.charCodeAt(j) << (8 * j);
  INT_LEN[k] = t.length;
}

/**
 * Writes v / 1e7 with exactly 7 decimals (v an integer, |v| < 2^31, so |v / 1e7| < 215 degrees). In 32-bit integer
 * arithmetic throughout: the floating-point floor and modulo it replaces were a third of writing a line.
 */
function writeFixed7(buf: Buffer, view: DataView, at: number, v: number): number {
  if (v < 0) {
    buf[at++] = 0x2d; // -
    v = -v;
  }
  const int = (v / 10000000) | 0;
  const frac = v - int * 10000000;
  // the integer part (degrees) in one store of up to 4 bytes, the ones past its digits overwritten next
  view.setUint32(at, INT_TEXT[int]!, true);
  at += INT_LEN[int]!;
  // the point and the 7 decimals in two 4-byte stores: ".ddd" (the first 3, whose 4-digit form starts with a 0
  // that the point replaces) and "dddd"
  const hi = (frac / 10000) | 0;
  view.setUint32(at, (DIGITS4[hi]! & ~0xff) | 0x2e, true);
  view.setUint32(at + 4, DIGITS4[frac - hi * 10000]!, true);
  return at + 8;
}
