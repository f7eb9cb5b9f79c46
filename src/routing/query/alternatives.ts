import type { CHQuery } from './ch-query.js';
import { chainsOf, roadChains, route, seedAt, type ChainSeed, type RouteEnds } from './chains.js';
import type { RoadGraph } from '../road-graph.js';
import type { RoutePath } from './path.js';

/**
 * Via-node alternatives on the contraction hierarchy (the approach OSRM takes; Abraham et al., "Alternative
 * routes in road networks"). After a full (non-stopping) bidirectional CH search, every chain reached by both
 * searches is a candidate via node v, with cost d_f(v) + d_b(v). Candidates are tried by increasing cost and a
 * path is accepted when it is
 *  - bounded: cost <= MAX_STRETCH x the primary's;
 *  - simple: no junction repeated, nor a node of the roads between the snapped points and their seeds' junctions
 *    (rejects "drive into a side street and back");
 *  - different: it shares < MAX_SHARE of its travel time with every route accepted so far (OSRM's measure too);
 *    most candidates fail this on the road they share at both ends, which CHQuery.sharedEnds measures on the
 *    packed paths, before any T-test or unpacking; the exact measure is taken on chains (a cross-country path is
 *    ~10^3 of them, ~10^4 road edges);
 *  - locally optimal: the stretch of T around v is itself a shortest path (a T-test run on a second query
 *    object), which rejects pointless detours. T is a tenth of the primary's cost, as OSRM takes it, but at least
 *    a quarter of it up to 3 minutes, so a short route's windows still span a detour round a block. At 600 copies
 *    a quarter throughout (the paper's value) made long routes run 11.7 T-tests (1.2 ms) to find 1.96
 *    alternatives; a tenth runs 3.6 (0.3 ms) and finds 2.
 */
export const MAX_STRETCH = 1.4;
const MAX_SHARE = 0.75;
const MAX_CANDIDATES = 40;
const LOCAL_FRACTION = 0.1;
const LOCAL_SHORT = { fraction: 0.25, maxMs: 180_000 };

export function viaAlternatives(
  ends: RouteEnds,
  q: CHQuery,
  check: CHQuery,
  primary: Pick<RoutePath, 'edges'>,
  meet: number,
  bestCost: number,
  want: number,
  onAccept?: (p: RoutePath, n: number) => void,
): RoutePath[] {
  const { g } = ends;
  const seeds = [0, 0];
  const primaryPacked = q.packed(meet, seeds);
  // Via nodes on the primary at its own cost lead back to the primary: skipped without unpacking them.
  const primarySeed = seeds[0]!;
  let onPrimary: IntSet | undefined;
  const isOnPrimary = (v: number) => v === primarySeed || (onPrimary ??= edgeSet(primary.edges)).has(v);
  // Accepted routes: their packed paths (for the shared ends), their chains and the set of them (for the exact
  // overlap, built when a later candidate gets that far: a hash set sized by the route, no per-node or per-edge
  // scratch memory in every routing thread).
  const accepted: Array<{ packed: number[]; edges: Uint32Array; s: ChainSeed; t: ChainSeed; set?: IntSet }> = [
    { packed: primaryPacked, edges: primary.edges, s: seedAt(ends.S, seeds[0]!), t: seedAt(ends.T, seeds[1]!) },
  ];
  // The roads between the snapped points and the seeds' junctions, shared by routes from the same seeds.
  const seedsShared = (a: { s: ChainSeed; t: ChainSeed }, s: ChainSeed, t: ChainSeed) =>
    (a.s === s ? s.roadsMs : 0) + (a.t === t ? t.roadsMs : 0);
  const seen = new Set<number>();
  const cands: Candidate[] = [];
  // A long route ranks ~60 candidates and tries ~3: their packed paths are walked into one scratch array to rank
  // them, and walked again for the few tried, instead of each kept (an array per candidate, grown edge by edge).
  const scratch: number[] = [];
  for (const v of q.meetNodes) {
    if (seen.has(v)) continue;
    seen.add(v);
    const dF = q.distF(v),
      dB = q.distB(v);
    if (dF + dB > bestCost * MAX_STRETCH || (dF + dB <= bestCost + 1 && isOnPrimary(v))) continue;
    const packed = q.packed(v, seeds, scratch);
    const sNode = seeds[0]!,
      tNode = seeds[1]!;
    const s = seedAt(ends.S, sNode),
      t = seedAt(ends.T, tNode);
    // travel time of the via path's whole road edges (the seeds' offsets are their roads and the partial first
    // and last pieces)
    const cost = dF - q.distF(sNode) + dB - q.distB(tNode) + s.roadsMs + t.roadsMs;
    const sharedLB = q.sharedEnds(packed, accepted[0]!.packed) + seedsShared(accepted[0]!, s, t);
    if (sharedLB < MAX_SHARE * cost) cands.push({ v, sNode, tNode, s, t, cost, rank: 2 * cost + sharedLB });
  }
  // OSRM's ranking: short, and sharing little with the primary, first
  cands.sort((a, b) => a.rank - b.rank || a.v - b.v);
  const out: RoutePath[] = [];
  let tried = 0;
  let ownChains: IntSet | undefined;
  const localSpan = Math.max(bestCost * LOCAL_FRACTION, Math.min(bestCost * LOCAL_SHORT.fraction, LOCAL_SHORT.maxMs));
  for (const { v, sNode, tNode, s, t, cost } of cands) {
    if (out.length >= want || tried >= MAX_CANDIDATES) break;
    const packed = q.packed(v);
    const limit = (a: (typeof accepted)[number]) => MAX_SHARE * cost - seedsShared(a, s, t);
    if (accepted.some((a, i) => i > 0 && q.sharedEnds(packed, a.packed) >= limit(a))) continue;
    tried++;
    if (!locallyOptimal(check, q, v, sNode, localSpan)) continue;
    // the few candidates left are unpacked for the exact tests (on chains), and assembled once they pass
    const turns = q.unpack(v),
      edges = chainsOf(g, turns);
    if (accepted.some((a) => shared(g, edges, (a.set ??= edgeSet(a.edges))) >= limit(a))) continue;
    if (!simple(g, sNode, edges)) continue;
    const path = route(ends, sNode, turns, tNode, edges);
    if (passesSeedRoadsTwice(path, s, t, (ownChains ??= roadChainSet(g, ends)))) continue;
    accepted.push({ packed, edges, s, t });
    out.push(path);
    onAccept?.(path, out.length);
  }
  return out;
}

interface Candidate {
  v: number;
  sNode: number;
  tNode: number;
  s: ChainSeed;
  t: ChainSeed;
  cost: number;
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

/**
 * No junction visited twice: the one the seed chain `start` leads to, then the one each chain leads to (a chain's
 * nodes are its own). Stricter than a turn-aware route needs (going round a block to make a forbidden turn passes a
 * junction twice), which an alternative does not need to do.
 */
function simple(g: RoadGraph, start: number, chains: Uint32Array): boolean {
  const nodes = new IntSet(chains.length + 1);
  nodes.add(g.cHead[start]!);
  for (let i = 0; i < chains.length; i++) if (!nodes.add(g.cHead[chains[i]!]!)) return false;
  return true;
}

/** The chains over the origin's and the destination's roads (chains.ts roadChains). */
function roadChainSet(g: RoadGraph, ends: RouteEnds): IntSet {
  const list = [...roadChains(g, ends.from), ...roadChains(g, ends.to)];
  const set = new IntSet(list.length);
  for (const c of list) set.add(c);
  return set;
}

/**
 * Whether the route passes a node of its seeds' roads twice: a detour back over the origin's or destination's own
 * road (to a junction and back past the point), which the junction-level test cannot see. The route drives such a
 * node again on a whole chain over that road (`own`), or on a piece of a road edge: those nodes are few, so one pass
 * over the route's piece ends counts them.
 */
function passesSeedRoadsTwice(p: RoutePath, s: ChainSeed, t: ChainSeed, own: IntSet): boolean {
  for (let i = 0; i < p.n; i++) if (p.chain[i]! >= 0 && own.has(p.chain[i]!)) return true;
  const ownNodes = new IntSet(s.roads.length + t.roads.length + 2);
  // the range of their ids: most of a long route's piece ends are outside it and need no hash lookup
  let lo = s.end,
    hi = s.end;
  const mine = (v: number) => {
    ownNodes.add(v);
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  };
  mine(s.end);
  for (let i = 0; i < s.roads.length && i < p.n; i++) if (p.node[i]! >= 0) mine(p.node[i]!);
  const tail = t.roads.length;
  for (let i = p.n - 1 - tail; i < p.n - 1; i++) if (i >= 0 && p.node[i]! >= 0) mine(p.node[i]!);
  const seen = new IntSet(s.roads.length + t.roads.length + 2);
  for (let i = 0; i < p.n; i++) {
    const v = p.node[i]!;
    if (v >= lo && v <= hi && ownNodes.has(v) && !seen.add(v)) return true;
  }
  return false;
}

/** Travel time of `chains` that also lies on the other route (each occurrence counts). */
function shared(g: RoadGraph, chains: Uint32Array, other: IntSet): number {
  let s = 0;
  for (let i = 0; i < chains.length; i++) if (other.has(chains[i]!)) s += g.cMs[chains[i]!]!;
  return s;
}

/**
 * T-test: the sub-path from T/2 before v to T/2 after v must be a shortest path between its ends. Both ends are
 * found on the packed path, descending only into the one shortcut that holds each (see CHQuery.lastWithin), so a
 * candidate is tested without unpacking it.
 */
function locallyOptimal(check: CHQuery, q: CHQuery, v: number, sNode: number, T: number): boolean {
  const atSource = q.distF(sNode),
    before = q.distF(v) - atSource; // v's position: cost from the source seed
  // i: the last node at or before position `before - T/2`, in the forward half (e: the tree edge into y)
  const iTarget = before - T / 2;
  let iNode = v,
    iPos = before;
  for (let y = v, e = q.parF(y); iPos > iTarget && e >= 0; e = q.parF(y)) {
    const x = q.tail(e),
      px = q.distF(x) - atSource;
    if (px <= iTarget) [iNode, iPos] = q.lastWithin(e, iTarget - px, px);
    else [iNode, iPos] = [x, px];
    y = x;
  }
  // j: the first node at or after position `before + T/2`, in the backward half (or the target seed)
  const jTarget = T / 2,
    toTarget = q.distB(v);
  let jNode = v,
    jPos = 0;
  for (let y = v, e = q.parB(y); jPos < jTarget && e >= 0; e = q.parB(y)) {
    const x = q.head(e),
      px = toTarget - q.distB(x);
    if (px >= jTarget) [jNode, jPos] = q.firstFrom(e, jTarget - jPos, jPos);
    else [jNode, jPos] = [x, px];
    y = x;
  }
  const sub = before + jPos - iPos;
  if (iNode === jNode || sub <= 0) return true;
  // locally optimal unless a path 1 ms (a tie) or more shorter exists, which is all the search looks for
  return check.run([[iNode, 0]], [[jNode, 0]], 0, sub - 1) === undefined;
}
