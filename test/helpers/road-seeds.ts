import type { Seed } from '../../src/routing/ch-query.js';
import { CHQuery } from '../../src/routing/ch-query.js';
import { seedsOf, sourceSeeds, targetSeeds } from '../../src/routing/chains.js';
import { BidiDijkstra } from '../../src/routing/dijkstra.js';
import type { RoadGraph } from '../../src/routing/graph.js';
import { directPath, tailOf } from '../../src/routing/path.js';
import { snapPoint, type Snap } from '../../src/routing/snap.js';

/**
 * Route costs two ways, to compare: plain Dijkstra over every road graph node, seeded at the snapped segment's own
 * ends (no chains), and the hierarchy over junctions and chains, seeded along the chains as the router is.
 */
export function costsBothWays(g: RoadGraph) {
  const road = new BidiDijkstra({ n: g.meta.nodes, first: g.first, head: g.head, ms: g.ms });
  const q = new CHQuery(g, g.meta.stats.chCoreNodes ?? 0);
  const junctions = new BidiDijkstra({ n: g.cFirst.length - 1, first: g.cFirst, head: g.cHead, ms: g.cMs });
  const range = (s: number, d: number) => [g.segFirst[2 * s + d]!, g.segFirst[2 * s + d + 1]!] as const;
  const roadSources = (s: Snap): Seed[] => {
    const out: Seed[] = [];
    for (let d = 0; d < 2; d++) {
      const [i0, i1] = range(s.seg, d);
      if (i0 < i1) out.push([g.head[g.segEdges[i0]!]!, (d ? s.t : 1 - s.t) * g.ms[g.segEdges[i0]!]!]);
    }
    return out;
  };
  const roadTargets = (s: Snap): Seed[] => {
    const out: Seed[] = [];
    for (let d = 0; d < 2; d++) {
      const [i0, i1] = range(s.seg, d);
      for (let i = i0; i < i1; i++) out.push([tailOf(g, g.segEdges[i]!), (d ? 1 - s.t : s.t) * g.ms[g.segEdges[i]!]!]);
    }
    return out;
  };
  return (a: Snap, b: Snap) => {
    const same = directPath(g, a, b)?.ms ?? Infinity;
    const { seeds, direct } = sourceSeeds(g, a, b);
    const S = seedsOf(seeds),
      T = seedsOf(targetSeeds(g, b));
    const ch = q.run(S, T)?.cost ?? Infinity;
    return {
      road: Math.min(same, road.run(roadSources(a), roadTargets(b))),
      chains: Math.min(same, direct?.ms ?? Infinity, ch),
      /** the hierarchy's cost and plain Dijkstra's over the junction graph, from the same seeds */
      ch,
      junctionDijkstra: junctions.run(S, T),
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
