import { indexOfSorted } from '../../core/sorted.js';
import type { Seed } from './ch-query.js';
import type { RoadGraph } from '../road-graph.js';
import { assembleChains, segEdgeRange, tailOf, type RoutePath } from './path.js';
import type { Snap } from './snap.js';

/**
 * The hierarchy's graph is chains and the turns between them (road-graph.ts ChainArrays and TurnArrays,
 * import/roads/chains.ts and turns.ts): a search node is a chain, reached once it has been driven to its end. A
 * snapped origin seeds the chain it lies on, at the cost of driving on to that chain's end (in each drivable
 * direction); a snapped destination is reached from every chain that may turn onto the destination's chain, at
 * the cost of that turn and of driving along the destination's chain to the point. The road edges walked belong
 * to the route and their time to the seed's offset.
 */

export const isJunction = (g: RoadGraph, v: number): boolean => (g.jBits[v >>> 3]! & (1 << (v & 7))) !== 0;

/** The junction id of road graph node v (a junction). */
function junctionOf(g: RoadGraph, v: number): number {
  const j = indexOfSorted(g.jNode, v);
  if (j < 0) throw new Error(`road graph node ${v} is not a junction`);
  return j;
}

/** The chain whose first road edge is x (x leaves junction j). */
function chainFrom(g: RoadGraph, x: number, j = junctionOf(g, tailOf(g, x))): number {
  for (let c = g.cFirst[j]!; c < g.cFirst[j + 1]!; c++) if (g.cEdges[g.cEdgeFirst[c]!] === x) return c;
  throw new Error(`road edge ${x} starts no chain`);
}

/** The turn from chain p onto chain d, or -1 when there is none (a restriction, or a U-turn with other ways on). */
export function turnOnto(g: RoadGraph, p: number, d: number): number {
  for (let t = g.tFirst[p]!; t < g.tFirst[p + 1]!; t++) if (g.tHead[t] === d) return t;
  return -1;
}

/** The chains the turns lead onto, in order. */
export function chainsOf(g: RoadGraph, turns: Uint32Array): Uint32Array {
  const out = new Uint32Array(turns.length);
  for (let i = 0; i < turns.length; i++) out[i] = g.tHead[turns[i]!]!;
  return out;
}

/**
 * One end of a search: chain `node` at `offset` ms from the snapped point (source) or to it (target), over the
 * road edges `roads` (`roadsMs` of it) between `end` (the snapped segment's end node) and the junction the chain
 * ends at (source) or the destination chain starts at (target), in driving order; a target's offset includes
 * the turn (`turnMs`) from chain `node` onto the destination's chain.
 */
export interface ChainSeed {
  node: number;
  offset: number;
  end: number;
  roads: number[];
  roadsMs: number;
  turnMs: number;
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
    seeds.push({ node: chainOf(g, s.seg, d, e), offset, end, roads, roadsMs: offset - part, turnMs: 0 });
  }
  return direct ? { seeds, direct } : { seeds };
}

/** The chain of road edge e, which drives segment s in direction d: found by walking back to its junction. */
function chainOf(g: RoadGraph, s: number, d: number, e: number): number {
  for (let seg = s, x = e; ;) {
    if (isJunction(g, d ? g.segB[seg]! : g.segA[seg]!)) return chainFrom(g, x);
    seg += d ? 1 : -1;
    x = g.segEdges[range(g, seg, d)[0]]!;
  }
}

/**
 * Where a route may end: for each graph edge onto the snapped segment, the chain it lies on (one per copy of a
 * restricted junction it may start from), entered by a turn from any chain that ends where it starts.
 */
export function targetSeeds(g: RoadGraph, s: Snap): ChainSeed[] {
  const seeds: ChainSeed[] = [];
  const enter = (x: number, end: number, roads: number[], roadsMs: number, offset: number) => {
    const j = junctionOf(g, tailOf(g, x)),
      d = chainFrom(g, x, j);
    for (let i = g.cInFirst[j]!; i < g.cInFirst[j + 1]!; i++) {
      const p = g.cIn[i]!,
        t = turnOnto(g, p, d);
      if (t < 0) continue;
      const turnMs = g.tMs[t]!;
      seeds.push({ node: p, offset: offset + roadsMs + turnMs, end, roads, roadsMs, turnMs });
    }
  };
  for (let d = 0; d < 2; d++) {
    const [i0, i1] = range(g, s.seg, d);
    for (let i = i0; i < i1; i++) {
      const e = g.segEdges[i]!,
        end = tailOf(g, e),
        offset = (d ? 1 - s.t : s.t) * g.ms[e]!;
      if (isJunction(g, end)) {
        enter(e, end, [], 0, offset);
        continue;
      }
      // back along the chain: segment by segment until the one whose tail end is a junction, whose graph edges
      // (one per copy of a restricted junction) each start a chain
      const roads: number[] = [];
      let ms = 0;
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
          enter(x, end, [x, ...roads], ms + g.ms[x]!, offset);
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

/** A route as the search found it (its seeds and the unpacked turns between them), before route() assembles it. */
export interface FoundRoute {
  ends: RouteEnds;
  sNode: number;
  turns: Uint32Array;
  tNode: number;
}

/**
 * The route from the snapped origin along the seed chain `sNode`'s roads, over `turns` (the hierarchy's original
 * edges, unpacked), then onto the destination's chain from chain `tNode` and along its roads to the snapped
 * destination. Its `edges` are `chains`, the chains the turns lead onto (what alternatives compare); its time
 * includes every turn's, counted on the piece that leaves the junction where it is made.
 */
export function route(
  ends: RouteEnds,
  sNode: number,
  turns: Uint32Array,
  tNode: number,
  chains = chainsOf(ends.g, turns),
): RoutePath {
  const { g } = ends;
  const s = seedAt(ends.S, sNode),
    t = seedAt(ends.T, tNode);
  return assembleChains(g, ends.from, ends.to, s.end, s.roads, turns, chains, t.turnMs, t.roads, t.end);
}

/**
 * Every chain over the snapped segment's road: in both directions, from every copy of a split junction. A route
 * that drives one of them passes the snapped point again (alternatives.ts).
 */
export function roadChains(g: RoadGraph, s: Snap): number[] {
  const out: number[] = [];
  for (let d = 0; d < 2; d++) {
    if (range(g, s.seg, d)[0] === range(g, s.seg, d)[1]) continue;
    // back along the road to the segment leaving its junction, whose graph edges each start a chain
    for (let seg = s.seg; ; seg += d ? 1 : -1) {
      if (!isJunction(g, d ? g.segB[seg]! : g.segA[seg]!)) continue;
      const [k0, k1] = range(g, seg, d);
      for (let k = k0; k < k1; k++) out.push(chainFrom(g, g.segEdges[k]!));
      break;
    }
  }
  return out;
}
