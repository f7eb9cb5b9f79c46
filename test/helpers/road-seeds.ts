import FlatQueue from 'flatqueue';
import type { Seed } from '../../src/routing/query/ch-query.js';
import { CHQuery } from '../../src/routing/query/ch-query.js';
import { seedsOf, sourceSeeds, targetSeeds } from '../../src/routing/query/chains.js';
import { BidiDijkstra } from '../../src/routing/query/dijkstra.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { directPath } from '../../src/routing/query/path.js';
import { snapPoint, type Snap } from '../../src/routing/query/snap.js';

/**
 * Route costs two ways, to compare: Dijkstra over every road edge (edge-based: along a chain to its next road edge,
 * at a chain's end by each of its turns), seeded on the snapped segment's own edges, and the hierarchy over chains
 * and turns, seeded as the router is. Both price turns from the graph's turn table.
 */
export function costsBothWays(g: RoadGraph) {
  const m = g.head.length;
  // each road edge's chain and the next road edge on it (-1 at the chain's end)
  const chainOf = new Uint32Array(m),
    next = new Int32Array(m).fill(-1);
  for (let c = 0; c < g.cHead.length; c++)
    for (let k = g.cEdgeFirst[c]!; k < g.cEdgeFirst[c + 1]!; k++) {
      chainOf[g.cEdges[k]!] = c;
      if (k + 1 < g.cEdgeFirst[c + 1]!) next[g.cEdges[k]!] = g.cEdges[k + 1]!;
    }
  const moves = (e: number, out: (f: number, cost: number) => void) => {
    if (next[e]! >= 0) return out(next[e]!, g.ms[next[e]!]!);
    const p = chainOf[e]!;
    for (let t = g.tFirst[p]!; t < g.tFirst[p + 1]!; t++) {
      const f = g.cEdges[g.cEdgeFirst[g.tHead[t]!]!]!;
      out(f, g.tMs[t]! + g.ms[f]!);
    }
  };
  const range = (s: number, d: number) => [g.segFirst[2 * s + d]!, g.segFirst[2 * s + d + 1]!] as const;
  const roadRoute = (a: Snap, b: Snap): number => {
    const dist = new Map<number, number>();
    const q = new FlatQueue<number>();
    for (let d = 0; d < 2; d++) {
      const [i0, i1] = range(a.seg, d);
      if (i0 === i1) continue;
      const e = g.segEdges[i0]!,
        c = (d ? a.t : 1 - a.t) * g.ms[e]!;
      if (c < (dist.get(e) ?? Infinity)) {
        dist.set(e, c);
        q.push(e, c);
      }
    }
    // entering a destination edge x pays the part of it up to the point instead of all of it
    const toPoint = new Map<number, number>();
    for (let d = 0; d < 2; d++) {
      const [i0, i1] = range(b.seg, d);
      for (let i = i0; i < i1; i++) toPoint.set(g.segEdges[i]!, (d ? 1 - b.t : b.t) * g.ms[g.segEdges[i]!]!);
    }
    let best = Infinity;
    while (q.length) {
      const du = q.peekValue()!,
        u = q.pop()!;
      if (du > dist.get(u)! || du >= best) continue;
      moves(u, (f, cost) => {
        const part = toPoint.get(f);
        if (part !== undefined) best = Math.min(best, du + cost - g.ms[f]! + part);
        const nd = du + cost;
        if (nd < (dist.get(f) ?? Infinity)) {
          dist.set(f, nd);
          q.push(f, nd);
        }
      });
    }
    return best;
  };
  const q = new CHQuery(g, g.meta.stats.chCoreNodes ?? 0);
  const w = Uint32Array.from(g.tHead, (d, t) => g.tMs[t]! + g.cMs[d]!);
  const turns = new BidiDijkstra({ n: g.cHead.length, first: g.tFirst, head: g.tHead, ms: w });
  return (a: Snap, b: Snap) => {
    const same = directPath(g, a, b)?.ms ?? Infinity;
    const { seeds, direct } = sourceSeeds(g, a, b);
    const S: Seed[] = seedsOf(seeds),
      T: Seed[] = seedsOf(targetSeeds(g, b));
    const ch = q.run(S, T)?.cost ?? Infinity;
    return {
      road: Math.min(same, roadRoute(a, b)),
      chains: Math.min(same, direct?.ms ?? Infinity, ch),
      /** the hierarchy's cost and plain Dijkstra's over chains and turns, from the same seeds */
      ch,
      turnDijkstra: turns.run(S, T),
    };
  };
}

/** The point at fraction t along segment s, snapped (within maxMeters). */
export const snapOnSegment = (g: RoadGraph, s: number, t: number, maxMeters: number): Snap =>
  snapPoint(
    g,
    g.lat[g.segA[s]!]! + t * (g.lat[g.segB[s]!]! - g.lat[g.segA[s]!]!),
    g.lon[g.segA[s]!]! + t * (g.lon[g.segB[s]!]! - g.lon[g.segA[s]!]!),
    maxMeters,
  )!;
