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
 *  - different: it shares < MAX_SHARE of its length with every route accepted so far;
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
  bestCost: number,
  want: number,
): RoutePath[] {
  // Via nodes on the primary at its own cost lead back to the primary: skipped without unpacking them.
  const onPrimary = new Uint32Array(primary.edges.length);
  primary.edges.forEach((e, i) => (onPrimary[i] = g.head[e]!));
  onPrimary.sort();
  const cands: Array<[number, number]> = [];
  for (const v of q.meetNodes) {
    const c = q.distF[v]! + q.distB[v]!;
    if (c <= bestCost * MAX_STRETCH && !(c <= bestCost + 1 && has(onPrimary, v))) cands.push([v, c]);
  }
  cands.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  // Accepted routes' edges, sorted: overlap is a binary search per edge, with no per-node or per-edge scratch
  // memory (which would cost bytes per graph node in every routing thread).
  const accepted = [sortedEdges(primary.edges)];
  const out: RoutePath[] = [];
  let tried = 0,
    last = -1;
  for (const [v] of cands) {
    if (v === last) continue; // meetNodes may list a node twice
    last = v;
    if (out.length >= want || tried++ >= MAX_CANDIDATES) break;
    const edges = q.unpack(v);
    const sNode = q.seedF(v),
      tNode = q.seedB(v);
    if (!simple(g, sNode, edges)) continue;
    // Checks run on the bare edge list; the route pieces are built only for accepted paths.
    let len = 0;
    for (const e of edges) len += g.dist[e]!;
    if (accepted.some((set) => shared(g, edges, set) >= MAX_SHARE * len)) continue;
    if (!locallyOptimal(g, check, q, v, edges, sNode, bestCost * LOCAL_FRACTION)) continue;
    accepted.push(sortedEdges(edges));
    out.push(assemble(g, from, to, sNode, edges, tNode));
  }
  return out;
}

const sortedEdges = (edges: number[]) => Uint32Array.from(edges).sort();

/** No node visited twice (sorted copy of the visited nodes, then neighbours compared). */
function simple(g: RoadGraph, start: number, edges: number[]): boolean {
  const nodes = new Uint32Array(edges.length + 1);
  nodes[0] = start;
  for (let i = 0; i < edges.length; i++) nodes[i + 1] = g.head[edges[i]!]!;
  nodes.sort();
  for (let i = 1; i < nodes.length; i++) if (nodes[i] === nodes[i - 1]) return false;
  return true;
}

function has(sorted: Uint32Array, x: number): boolean {
  let lo = 0,
    hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1,
      y = sorted[mid]!;
    if (y < x) lo = mid + 1;
    else if (y > x) hi = mid - 1;
    else return true;
  }
  return false;
}

function shared(g: RoadGraph, edges: number[], other: Uint32Array): number {
  let s = 0;
  for (const e of edges) if (has(other, e)) s += g.dist[e]!;
  return s;
}

/** T-test: the sub-path from T/2 before v to T/2 after v must be a shortest path between its ends. */
function locallyOptimal(
  g: RoadGraph,
  check: CHQuery,
  q: CHQuery,
  v: number,
  edges: number[],
  sNode: number,
  T: number,
): boolean {
  // Position of v on the path: the forward part costs distF(v) minus the source seed's offset.
  const prefix = q.distF[v]! - q.distF[sNode]!;
  // the sub-path's ends: the last node at least T/2 before v, the first at least T/2 after it
  let i = 0,
    iNode = sNode,
    iCum = 0,
    cum = 0,
    j = -1,
    jNode = sNode,
    jCum = 0;
  let prev = sNode;
  for (let k = 0; k < edges.length; k++) {
    const e = edges[k]!;
    if (cum + g.ms[e]! <= prefix - T / 2) {
      i = k + 1;
      iNode = g.head[e]!;
      iCum = cum + g.ms[e]!;
    }
    cum += g.ms[e]!;
    prev = g.head[e]!;
    if (j < 0 && cum >= prefix + T / 2) {
      j = k + 1;
      jNode = prev;
      jCum = cum;
    }
  }
  if (j < 0) {
    j = edges.length;
    jNode = prev;
    jCum = cum;
  }
  if (j <= i) return true;
  const r = check.run([[iNode, 0]], [[jNode, 0]]);
  return r !== undefined && r.cost >= jCum - iCum - 1; // 1 ms tolerance for equal-cost ties
}
