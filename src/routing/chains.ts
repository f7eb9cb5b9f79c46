import { indexOfSorted } from '../core/sorted.js';
import type { Seed } from './ch-query.js';
import type { RoadGraph } from './graph.js';
import { assemble, segEdgeRange, tailOf, type RoutePath } from './path.js';
import type { Snap } from './snap.js';

/**
 * The hierarchy's graph is junctions and chains (graph.ts ChainArrays, import/roads/chains.ts). A search starts and
 * ends at junctions, so a snapped point is joined to them along its chain: a source goes on in each drivable
 * direction to the next junction, a target is reached from the junction before it; the road edges walked belong
 * to the route and their time to the seed's offset.
 */

export const isJunction = (g: RoadGraph, v: number): boolean => (g.jBits[v >>> 3]! & (1 << (v & 7))) !== 0;

/** The junction id of road graph node v (a junction). */
export function junctionOf(g: RoadGraph, v: number): number {
  if (!g.jNode.length) return v;
  const j = indexOfSorted(g.jNode, v);
  if (j < 0) throw new Error(`road graph node ${v} is not a junction`);
  return j;
}

/** Road edges `before`, then those of `chains` in order, then `after`, in one array. */
function chainRoads(g: RoadGraph, before: number[], chains: Uint32Array, after: number[]): Uint32Array {
  const cf = g.cEdgeFirst,
    own = !g.cEdges.length; // a version 1 graph: every chain is its one road edge
  let n = before.length + after.length;
  if (own) n += chains.length;
  else for (let i = 0; i < chains.length; i++) n += cf[chains[i]! + 1]! - cf[chains[i]!]!;
  const out = new Uint32Array(n);
  out.set(before);
  let at = before.length;
  if (own) {
    out.set(chains, at);
    at += chains.length;
  } else
    for (let i = 0; i < chains.length; i++) {
      const c = chains[i]!;
      out.set(g.cEdges.subarray(cf[c], cf[c + 1]), at);
      at += cf[c + 1]! - cf[c]!;
    }
  out.set(after, at);
  return out;
}

/**
 * One end of a search: junction `node` at `offset` ms from the snapped point (source) or to it (target), over
 * the road edges `roads` (`roadsMs` of it) between `end` (the snapped segment's end node) and the junction, in
 * driving order.
 */
export interface ChainSeed {
  node: number;
  offset: number;
  end: number;
  roads: number[];
  roadsMs: number;
}

/** Graph edges of segment s driven in direction d (0: a -> b), as a range of segEdges. */
const range = (g: RoadGraph, s: number, d: number) => segEdgeRange(g, s, d === 1);

/**
 * Where a route may start from a snapped origin: for each drivable direction, the junction the chain leads to.
 * When the destination lies ahead on the origin's own chain (not on its segment: path.ts directPath), `direct`
 * is the route along the chain to it: from `end` over `roads` to node `last`, on the destination's segment.
 */
export function sourceSeeds(
  g: RoadGraph,
  s: Snap,
  to?: Snap,
): { seeds: ChainSeed[]; direct?: { end: number; roads: number[]; last: number; ms: number } } {
  const seeds: ChainSeed[] = [];
  let direct: { end: number; roads: number[]; last: number; ms: number } | undefined;
  for (let d = 0; d < 2; d++) {
    const [i0, i1] = range(g, s.seg, d);
    if (i0 === i1) continue;
    const e = g.segEdges[i0]!;
    const end = g.head[e]!;
    const roads: number[] = [];
    const part = (d ? s.t : 1 - s.t) * g.ms[e]!;
    let offset = part,
      v = end;
    for (let seg = s.seg; !isJunction(g, v);) {
      seg += d ? -1 : 1;
      const x = g.segEdges[range(g, seg, d)[0]]!;
      if (to && seg === to.seg && !direct) {
        direct = { end, roads: roads.slice(), last: v, ms: offset + (d ? 1 - to.t : to.t) * g.ms[x]! };
      }
      roads.push(x);
      offset += g.ms[x]!;
      v = g.head[x]!;
    }
    seeds.push({ node: junctionOf(g, v), offset, end, roads, roadsMs: offset - part });
  }
  return direct ? { seeds, direct } : { seeds };
}

/** Where a route may end: for each graph edge onto the snapped segment, the junction its chain comes from. */
export function targetSeeds(g: RoadGraph, s: Snap): ChainSeed[] {
  const seeds: ChainSeed[] = [];
  for (let d = 0; d < 2; d++) {
    const [i0, i1] = range(g, s.seg, d);
    for (let i = i0; i < i1; i++) {
      const e = g.segEdges[i]!,
        end = tailOf(g, e),
        offset = (d ? 1 - s.t : s.t) * g.ms[e]!;
      if (isJunction(g, end)) {
        seeds.push({ node: junctionOf(g, end), offset, end, roads: [], roadsMs: 0 });
        continue;
      }
      // back along the chain: segment by segment until the one whose tail end is a junction, whose graph edges
      // (one per copy of a restricted junction) each give a seed
      const roads: number[] = [];
      let ms = offset;
      for (let seg = s.seg; ;) {
        seg += d ? 1 : -1;
        const [k0, k1] = range(g, seg, d);
        const tailEnd = d ? g.segB[seg]! : g.segA[seg]!;
        if (!isJunction(g, tailEnd)) {
          const x = g.segEdges[k0]!;
          roads.push(x);
          ms += g.ms[x]!;
          continue;
        }
        roads.reverse();
        for (let k = k0; k < k1; k++) {
          const x = g.segEdges[k]!;
          const roadsMs = ms - offset + g.ms[x]!;
          seeds.push({
            node: junctionOf(g, tailOf(g, x)),
            offset: offset + roadsMs,
            end,
            roads: [x, ...roads],
            roadsMs,
          });
        }
        break;
      }
    }
  }
  return seeds;
}

export const seedsOf = (seeds: ChainSeed[]): Seed[] => seeds.map((s) => [s.node, s.offset]);

/** The seed a search used at junction `node`: the one with the smallest offset there, as the search took it. */
export function seedAt(seeds: ChainSeed[], node: number): ChainSeed {
  let best: ChainSeed | undefined;
  for (const s of seeds) if (s.node === node && (!best || s.offset < best.offset)) best = s;
  if (!best) throw new Error(`no search seed at junction ${node}`);
  return best;
}

/** The two ends of a query: the snapped points and the seeds the search started from. */
export interface RouteEnds {
  g: RoadGraph;
  from: Snap;
  to: Snap;
  S: ChainSeed[];
  T: ChainSeed[];
}

/**
 * The route from the snapped origin over the seed at junction `sNode`'s roads, the chains, and the roads of the
 * seed at junction `tNode` to the snapped destination. Its `edges` are the chains (what alternatives compare).
 */
export function route(ends: RouteEnds, sNode: number, chains: Uint32Array, tNode: number): RoutePath {
  const { g } = ends;
  const source = seedAt(ends.S, sNode),
    target = seedAt(ends.T, tNode);
  const roads = chainRoads(g, source.roads, chains, target.roads);
  return { ...assemble(g, ends.from, ends.to, source.end, roads, target.end), edges: chains };
}
