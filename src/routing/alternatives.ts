import type { CHQuery } from './ch-query.js';
import type { RoadGraph } from './graph.js';
import { assemble, type RoutePath } from './path.js';
import type { Snap } from './snap.js';

/**
 * Via-node alternatives on the contraction hierarchy (the approach OSRM takes; Abraham et al., "Alternative
 * routes in road networks"). After a full (non-stopping) bidirectional CH search, every node reached by both
 * searches is a candidate via node v, with cost d_f(v) + d_b(v). Candidates are tried by increasing cost and a
 * path is accepted when it is
 *  - bounded: cost <= MAX_STRETCH x the primary's;
 *  - simple: no node repeated (rejects "drive into a side street and back");
 *  - different: it shares < MAX_SHARE of its travel time with every route accepted so far (OSRM's measure too);
 *    most candidates fail this on the road they share at both ends, which CHQuery.sharedEnds measures on the
 *    packed paths, before any T-test or unpacking (a cross-country path unpacks to ~10^4 edges at random places
 *    in memory);
 *  - locally optimal: the stretch of T = 25 % of the primary's cost around v is itself a shortest path (a
 *    T-test run on a second query object), which rejects pointless detours around a block.
 */
export const MAX_STRETCH = 1.4;
export const MAX_SHARE = 0.75;
const MAX_CANDIDATES = 40;
const LOCAL_FRACTION = 0.25;

export function viaAlternatives(
  g: RoadGraph,
  q: CHQuery,
  check: CHQuery,
  from: Snap,
  to: Snap,
  primary: RoutePath,
  meet: number,
  bestCost: number,
  want: number,
): RoutePath[] {
  // Via nodes on the primary at its own cost lead back to the primary: skipped without unpacking them.
  let onPrimary: IntSet | undefined;
  const isOnPrimary = (v: number) => (onPrimary ??= headSet(g, primary.edges)).has(v);
  // Accepted routes: their packed paths (for the shared ends), their edges and the set of them (for the exact
  // overlap, built when a later candidate gets that far: a hash set sized by the route, no per-node or per-edge
  // scratch memory in every routing thread).
  const accepted: Array<{ packed: number[]; edges: Uint32Array; set?: IntSet }> = [
    { packed: q.packed(meet), edges: primary.edges },
  ];
  const seen = new Set<number>();
  const cands: Candidate[] = [];
  for (const v of q.meetNodes) {
    if (seen.has(v)) continue;
    seen.add(v);
    const c = q.distF(v) + q.distB(v);
    if (c > bestCost * MAX_STRETCH || (c <= bestCost + 1 && isOnPrimary(v))) continue;
    const sNode = q.seedF(v),
      tNode = q.seedB(v);
    // travel time of the via path's whole edges (the seeds' offsets are the partial first and last pieces)
    const cost = q.distF(v) - q.distF(sNode) + q.distB(v) - q.distB(tNode);
    const packed = q.packed(v);
    const sharedLB = q.sharedEnds(packed, accepted[0]!.packed);
    if (sharedLB < MAX_SHARE * cost) cands.push({ v, sNode, tNode, cost, packed, rank: 2 * cost + sharedLB });
  }
  // OSRM's ranking: short, and sharing little with the primary, first
  cands.sort((a, b) => a.rank - b.rank || a.v - b.v);
  const out: RoutePath[] = [];
  let tried = 0;
  for (const { v, sNode, tNode, cost, packed } of cands) {
    if (out.length >= want || tried >= MAX_CANDIDATES) break;
    if (accepted.some((a, i) => i > 0 && q.sharedEnds(packed, a.packed) >= MAX_SHARE * cost)) continue;
    tried++;
    if (!locallyOptimal(check, q, v, sNode, bestCost * LOCAL_FRACTION)) continue;
    // the few candidates left are unpacked for the exact tests, and assembled first (nearly all of them pass):
    // the tests then find the edges' facts in cache
    const edges = q.unpack(v);
    const heads = new Uint32Array(edges.length);
    const path = assemble(g, from, to, sNode, edges, tNode, heads);
    if (accepted.some((a) => shared(g, edges, (a.set ??= edgeSet(a.edges))) >= MAX_SHARE * cost)) continue;
    if (!simple(sNode, heads)) continue;
    accepted.push({ packed, edges });
    out.push(path);
  }
  return out;
}

interface Candidate {
  v: number;
  sNode: number;
  tNode: number;
  cost: number;
  packed: number[];
  rank: number;
}

/**
 * A set of non-negative integers below 2^31 - 1 as an open-addressing hash table (linear probing, multiplicative
 * hash), sized for the number of members it will get.
 */
class IntSet {
  private readonly slots: Int32Array;
  private readonly shift: number;
  constructor(members: number) {
    let bits = 4;
    while (1 << bits < 2 * members) bits++;
    this.slots = new Int32Array(1 << bits);
    this.shift = 32 - bits;
  }
  /** Adds x; answers false when x was a member already. */
  add(x: number): boolean {
    const slots = this.slots,
      mask = slots.length - 1,
      k = x + 1; // 0 marks an empty slot
    for (let i = Math.imul(k, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      const y = slots[i]!;
      if (y === k) return false;
      if (y === 0) {
        slots[i] = k;
        return true;
      }
    }
  }
  has(x: number): boolean {
    const slots = this.slots,
      mask = slots.length - 1,
      k = x + 1;
    for (let i = Math.imul(k, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      const y = slots[i]!;
      if (y === k) return true;
      if (y === 0) return false;
    }
  }
}

function edgeSet(edges: Uint32Array): IntSet {
  const s = new IntSet(edges.length);
  for (let i = 0; i < edges.length; i++) s.add(edges[i]!);
  return s;
}

/** The nodes the edges lead to. */
function headSet(g: RoadGraph, edges: Uint32Array): IntSet {
  const s = new IntSet(edges.length);
  for (let i = 0; i < edges.length; i++) s.add(g.head[edges[i]!]!);
  return s;
}

/** No node visited twice: the start, then the node each edge leads to. */
function simple(start: number, heads: Uint32Array): boolean {
  const nodes = new IntSet(heads.length + 1);
  nodes.add(start);
  for (let i = 0; i < heads.length; i++) if (!nodes.add(heads[i]!)) return false;
  return true;
}

/** Travel time of `edges` that also lies on the other route (each occurrence counts). */
function shared(g: RoadGraph, edges: Uint32Array, other: IntSet): number {
  let s = 0;
  for (let i = 0; i < edges.length; i++) if (other.has(edges[i]!)) s += g.ms[edges[i]!]!;
  return s;
}

/**
 * T-test: the sub-path from T/2 before v to T/2 after v must be a shortest path between its ends. Both ends are
 * found on the packed path, descending only into the one shortcut that holds each (see CHQuery.lastWithin), so a
 * candidate is tested without unpacking it.
 */
function locallyOptimal(check: CHQuery, q: CHQuery, v: number, sNode: number, T: number): boolean {
  const before = q.distF(v) - q.distF(sNode); // v's position: cost from the source seed
  // i: the last node at or before position `before - T/2`, in the forward half
  const iTarget = before - T / 2;
  let iNode = v,
    iPos = before;
  for (let y = v; iPos > iTarget && q.parF(y) >= 0;) {
    const x = q.parentF(y),
      px = q.distF(x) - q.distF(sNode);
    if (px <= iTarget) [iNode, iPos] = q.lastWithin(q.parF(y), iTarget - px, px);
    else [iNode, iPos] = [x, px];
    y = x;
  }
  // j: the first node at or after position `before + T/2`, in the backward half (or the target seed)
  const jTarget = T / 2;
  let jNode = v,
    jPos = 0;
  for (let y = v; jPos < jTarget && q.parB(y) >= 0;) {
    const x = q.parentB(y),
      px = q.distB(v) - q.distB(x);
    if (px >= jTarget) [jNode, jPos] = q.firstFrom(q.parB(y), jTarget - jPos, jPos);
    else [jNode, jPos] = [x, px];
    y = x;
  }
  const sub = before + jPos - iPos;
  if (iNode === jNode || sub <= 0) return true;
  const r = check.run([[iNode, 0]], [[jNode, 0]]);
  return r !== undefined && r.cost >= sub - 1; // 1 ms tolerance for equal-cost ties
}
