import type { CHQuery, Seed } from './ch-query.js';
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
  const seen = new Set<number>();
  const cands: Array<[number, number]> = [];
  for (const v of q.meetNodes) {
    if (seen.has(v)) continue;
    seen.add(v);
    const c = q.distF[v]! + q.distB[v]!;
    if (c <= bestCost * MAX_STRETCH) cands.push([v, c]);
  }
  cands.sort((a, b) => a[1] - b[1]);
  const accepted: RoutePath[] = [primary];
  const edgeSets = [new Set(primary.edges)];
  const out: RoutePath[] = [];
  let tried = 0;
  for (const [v] of cands) {
    if (out.length >= want || tried++ >= MAX_CANDIDATES) break;
    const edges = q.unpack(v);
    const sNode = q.seedF(v),
      tNode = q.seedB(v);
    if (!simple(g, sNode, edges)) continue;
    // Checks run on the bare edge list; the (allocation-heavy) route pieces are built only for accepted paths.
    let len = 0;
    for (const e of edges) len += g.dist[e]!;
    if (edgeSets.some((set) => shared(g, edges, set) >= MAX_SHARE * len)) continue;
    if (!locallyOptimal(g, check, q, v, edges, sNode, bestCost * LOCAL_FRACTION)) continue;
    const path = assemble(g, from, to, sNode, edges, tNode);
    accepted.push(path);
    edgeSets.push(new Set(edges));
    out.push(path);
  }
  return out;
}

function simple(g: RoadGraph, start: number, edges: number[]): boolean {
  const nodes = new Set<number>([start]);
  for (const e of edges) {
    const h = g.head[e]!;
    if (nodes.has(h)) return false;
    nodes.add(h);
  }
  return true;
}

function shared(g: RoadGraph, edges: number[], other: Set<number>): number {
  let s = 0;
  for (const e of edges) if (other.has(e)) s += g.dist[e]!;
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
  const nodes = [sNode];
  const cum = [0];
  for (const e of edges) {
    nodes.push(g.head[e]!);
    cum.push(cum[cum.length - 1]! + g.ms[e]!);
  }
  let i = 0,
    j = nodes.length - 1;
  while (i + 1 < nodes.length && cum[i + 1]! <= prefix - T / 2) i++;
  while (j - 1 > 0 && cum[j - 1]! >= prefix + T / 2) j--;
  if (j <= i) return true;
  const sub = cum[j]! - cum[i]!;
  const seeds: Seed[] = [[nodes[i]!, 0]];
  const r = check.run(seeds, [[nodes[j]!, 0]]);
  return r !== undefined && r.cost >= sub - 1; // 1 ms tolerance for equal-cost ties
}
