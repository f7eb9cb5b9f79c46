import type { ChainArrays } from '../../routing/road-graph.js';

/**
 * Degree-2 chains. Eight in ten road graph nodes only shape a road between two junctions: a node inside one way
 * with exactly one segment on each side. The contraction hierarchy is built over the junctions alone, with one
 * edge per chain of road edges between two of them (as OSRM compresses its graph), so the hierarchy, its build and
 * every search over it are several times smaller; the road edges stay as they are for geometry and snapping, and
 * each chain lists its road edges in driving order (ChainArrays, read back in routing/query/chains.ts).
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
 * 0 for a chain node: an OSM node (below baseNodes) with no turn-restriction copies, touched by exactly two segment
 * ends, as the b end of segment s and the a end of segment s + 1 of the same way, with its two neighbours at
 * different places and one graph edge per drivable direction on both sides. Everything else (way ends, crossings,
 * restricted junctions and their copies) is a junction, flagged with the number of road segments that meet there
 * (1 to 255; a copy has its junction's), which prices the turns made there (turns.ts).
 */
export function junctionFlags(
  n: number,
  baseNodes: number,
  copyBase: ArrayLike<number>,
  g: Segments & { lat: Float64Array; lon: Float64Array },
  way: Uint32Array,
): Uint8Array {
  const S = g.segA.length;
  const touches = new Uint8Array(n);
  const touch = (v: number) => {
    if (touches[v]! < 255) touches[v]!++;
  };
  for (let s = 0; s < S; s++) {
    touch(g.segA[s]!);
    touch(g.segB[s]!);
  }
  const junction = new Uint8Array(n);
  for (let v = 0; v < baseNodes; v++) junction[v] = Math.max(1, touches[v]!);
  const wayOf = (s: number, d: number) => way[g.segEdges[g.segFirst[2 * s + d]!]!]!;
  for (let s = 0; s + 1 < S; s++) {
    const v = g.segB[s]!;
    if (v !== g.segA[s + 1] || v >= baseNodes || touches[v] !== 2) continue;
    // its two sides at different places (see buildChains' walk)
    const a = g.segA[s]!,
      b = g.segB[s + 1]!;
    if (g.lat[a] === g.lat[b] && g.lon[a] === g.lon[b]) continue;
    let ok = count(g, s, 0) + count(g, s, 1) > 0;
    for (let d = 0; d < 2 && ok; d++) {
      const c = count(g, s, d);
      ok = c === count(g, s + 1, d) && c <= 1 && (c === 0 || wayOf(s, d) === wayOf(s + 1, d));
    }
    if (ok) junction[v] = 0;
  }
  for (let i = 0; i < copyBase.length; i++) {
    const b = copyBase[i]!;
    junction[b] = junction[baseNodes + i] = Math.max(1, touches[b]!);
  }
  return junction;
}

/**
 * The chains of a graph whose node flags came from junctionFlags (renumbered with it): one per graph edge leaving a
 * junction, followed through chain nodes to the next junction. Every graph edge lies on exactly one chain. At a
 * chain node the way on is its out-edge that does not lead back to where the last edge came from, told by place:
 * the edge back may end at another copy of a restricted junction than the one the walk started from, but always at
 * its place, and junctionFlags keeps a node whose two neighbours share a place out of the chains.
 */
export function buildChains(
  g: { first: Uint32Array; head: Uint32Array; ms: Uint32Array; lat: Float64Array; lon: Float64Array },
  junction: Uint8Array,
): ChainArrays {
  const { first, head, lat, lon } = g;
  const n = first.length - 1,
    m = head.length;
  let J = 0,
    C = 0;
  for (let v = 0; v < n; v++)
    if (junction[v]) {
      J++;
      C += first[v + 1]! - first[v]!;
    }
  const jNode = new Uint32Array(J),
    jOf = new Int32Array(n).fill(-1);
  for (let v = 0, j = 0; v < n; v++)
    if (junction[v]) {
      jNode[j] = v;
      jOf[v] = j++;
    }
  const cFirst = new Uint32Array(J + 1),
    cHead = new Uint32Array(C),
    cMs = new Uint32Array(C),
    cEdgeFirst = new Uint32Array(C + 1),
    cEdges = new Uint32Array(m);
  let c = 0,
    at = 0;
  for (let j = 0; j < J; j++) {
    cFirst[j] = c;
    const u = jNode[j]!;
    for (let e = first[u]!; e < first[u + 1]!; e++) {
      cEdgeFirst[c] = at;
      let x = e,
        from = u,
        ms = 0;
      for (;;) {
        if (at === m) throw new Error('road graph: a chain of road edges does not end at a junction');
        cEdges[at++] = x;
        ms += g.ms[x]!;
        const h = head[x]!;
        if (junction[h]) {
          cHead[c] = jOf[h]!;
          break;
        }
        let next = -1;
        for (let k = first[h]!; k < first[h + 1]!; k++) {
          const y = head[k]!;
          if (lat[y] !== lat[from] || lon[y] !== lon[from]) next = k;
        }
        if (next < 0) throw new Error(`road graph: chain node ${h} has no way on`);
        from = h;
        x = next;
      }
      cMs[c++] = Math.min(ms, 0xffffffff);
    }
  }
  cFirst[J] = c;
  cEdgeFirst[C] = at;
  if (at !== m) throw new Error(`road graph: ${m - at} road edges lie on no chain between junctions`);
  const jBits = new Uint8Array((n + 7) >>> 3);
  for (let v = 0; v < n; v++) if (junction[v]) jBits[v >>> 3]! |= 1 << (v & 7);
  return { jBits, jNode, cFirst, cHead, cMs, cEdgeFirst, cEdges };
}
