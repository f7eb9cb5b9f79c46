import { GrowU32 } from './grow.js';
import type { ChainArrays } from '../../routing/graph.js';

/**
 * Degree-2 chains. Nine in ten road graph nodes only shape a road between two junctions: a node inside one way
 * with exactly one segment on each side. The contraction hierarchy is built over the junctions alone, with one
 * edge per chain of road edges between two of them (as OSRM compresses its graph), so the hierarchy, its build and
 * every search over it are several times smaller; the road edges stay as they are for geometry and snapping, and
 * each chain lists its road edges in driving order (ChainArrays, read back in routing/chains.ts).
 */

/** The snapping segments and the graph edges of each (graph.ts, before or after renumbering alike). */
interface Segments {
  segA: Uint32Array;
  segB: Uint32Array;
  segFirst: Uint32Array;
  segEdges: Uint32Array;
}

/** Graph edges of segment s driven in direction d (0: a -> b). */
const count = (g: Segments, s: number, d: number) => g.segFirst[2 * s + d + 1]! - g.segFirst[2 * s + d]!;

/**
 * 1 for a junction, 0 for a chain node: an OSM node (below baseNodes) with no turn-restriction copies, touched by
 * exactly two segment ends, as the b end of segment s and the a end of segment s + 1 of the same way (so a walk
 * along a chain goes from segment to neighbouring segment), with different nodes on its two sides and one graph
 * edge per drivable direction on both. Everything else (way ends, crossings, restricted junctions, their copies)
 * is a junction.
 */
export function junctionFlags(
  n: number,
  baseNodes: number,
  copyBase: ArrayLike<number>,
  g: Segments,
  way: Uint32Array,
): Uint8Array {
  const S = g.segA.length;
  const touches = new Uint8Array(n);
  const touch = (v: number) => {
    if (touches[v]! < 3) touches[v]!++;
  };
  for (let s = 0; s < S; s++) {
    touch(g.segA[s]!);
    touch(g.segB[s]!);
  }
  const junction = new Uint8Array(n).fill(1);
  const wayOf = (s: number, d: number) => way[g.segEdges[g.segFirst[2 * s + d]!]!]!;
  for (let s = 0; s + 1 < S; s++) {
    const v = g.segB[s]!;
    if (v !== g.segA[s + 1] || v >= baseNodes || touches[v] !== 2 || g.segA[s] === g.segB[s + 1]) continue;
    let ok = count(g, s, 0) + count(g, s, 1) > 0;
    for (let d = 0; d < 2 && ok; d++) {
      const c = count(g, s, d);
      ok = c === count(g, s + 1, d) && c <= 1 && (c === 0 || wayOf(s, d) === wayOf(s + 1, d));
    }
    if (ok) junction[v] = 0;
  }
  for (let i = 0; i < copyBase.length; i++) junction[copyBase[i]!] = 1;
  return junction;
}

/**
 * The chains of a graph whose node flags came from junctionFlags (renumbered with it): one per graph edge leaving a
 * junction, followed through chain nodes to the next junction. Every graph edge lies on exactly one chain.
 */
export function buildChains(
  g: Segments & { first: Uint32Array; head: Uint32Array; ms: Uint32Array },
  junction: Uint8Array,
): ChainArrays {
  const n = g.first.length - 1,
    m = g.head.length;
  // each graph edge's segment and direction (2s + d): a chain goes on from segment s to s + 1 (or s - 1 backwards)
  const edgeSeg = new Uint32Array(m);
  for (let k = 0; k + 1 < g.segFirst.length; k++)
    for (let i = g.segFirst[k]!; i < g.segFirst[k + 1]!; i++) edgeSeg[g.segEdges[i]!] = k;
  let J = 0;
  for (let v = 0; v < n; v++) J += junction[v]!;
  const jNode = new Uint32Array(J),
    jOf = new Int32Array(n).fill(-1);
  for (let v = 0, j = 0; v < n; v++)
    if (junction[v]) {
      jNode[j] = v;
      jOf[v] = j++;
    }
  const cFirst = new Uint32Array(J + 1);
  const cHead = new GrowU32(),
    cMs = new GrowU32(),
    cEdgeFirst = new GrowU32();
  const cEdges = new Uint32Array(m);
  let at = 0;
  for (let j = 0; j < J; j++) {
    cFirst[j] = cHead.length;
    const u = jNode[j]!;
    for (let e = g.first[u]!; e < g.first[u + 1]!; e++) {
      cEdgeFirst.push(at);
      let x = e,
        ms = 0;
      for (;;) {
        if (at === m) throw new Error('road graph: a chain of road edges does not end at a junction');
        cEdges[at++] = x;
        ms += g.ms[x]!;
        const h = g.head[x]!;
        if (junction[h]) {
          cHead.push(jOf[h]!);
          break;
        }
        const sd = edgeSeg[x]!,
          d = sd & 1,
          next = (sd >>> 1) + (d ? -1 : 1);
        x = g.segEdges[g.segFirst[2 * next + d]!]!;
      }
      cMs.push(Math.min(ms, 0xffffffff));
    }
  }
  cFirst[J] = cHead.length;
  cEdgeFirst.push(at);
  if (at !== m) throw new Error(`road graph: ${m - at} road edges lie on no chain between junctions`);
  const jBits = new Uint8Array((n + 7) >>> 3);
  for (let v = 0; v < n; v++) if (junction[v]) jBits[v >>> 3]! |= 1 << (v & 7);
  return {
    jBits,
    jNode,
    cFirst,
    cHead: cHead.view().slice(),
    cMs: cMs.view().slice(),
    cEdgeFirst: cEdgeFirst.view().slice(),
    cEdges,
  };
}
