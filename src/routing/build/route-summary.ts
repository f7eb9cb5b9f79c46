import type { ChainArrays, RoadGraph, RouteSummary, TurnArrays } from '../road-graph.js';
import { chainEnd, chainStart, inputCode, junctionInput, LOOK, streetName, ZERO_M } from '../answer/junction.js';

/** A float32 at or above x: Math.fround rounds to the nearest, which may be below, so x is raised past that first. */
const f32Up = (x: number) => Math.fround(x * (1 + 1e-6));

type Inputs = ChainArrays &
  TurnArrays &
  Pick<RoadGraph, 'meta' | 'first' | 'lat' | 'lon' | 'head' | 'dist' | 'way' | 'wayCls' | 'wayName' | 'wayRoundabout'>;

/** Typed array memory, shared with the routing threads when the graph's is. */
const memory = (bytes: number, shared: boolean) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));

/**
 * The summaries, in new arrays (shared memory when `shared`): one pass over every road edge and every turn, done at
 * import. `say` false (a graph file written before them, summed up at load): every turn says LOOK.
 */
export function routeSummaries(g: Inputs, shared = false, say = true): RouteSummary {
  const C = g.cEdgeFirst.length - 1,
    T = g.tHead.length;
  const cEnd = new Float64Array(memory(32 * C, shared));
  const cDev = new Float32Array(memory(4 * C, shared));
  const cWay = new Uint32Array(memory(4 * C, shared));
  const tSay = new Uint16Array(memory(2 * T, shared));
  const en = (w: number) => streetName(g, w, 'en'),
    ar = (w: number) => streetName(g, w, 'ar');
  const { lon, lat, head, dist, wayName, wayRoundabout, jNode, cFirst, cEdgeFirst, cEdges } = g;
  for (let j = 0; j < jNode.length; j++) {
    const u = jNode[j]!,
      ax = lon[u]!,
      ay = lat[u]!;
    for (let c = cFirst[j]!; c < cFirst[j + 1]!; c++) {
      const k0 = cEdgeFirst[c]!,
        k1 = cEdgeFirst[c + 1]!;
      let d = 0;
      for (let k = k0; k < k1; k++) if (dist[cEdges[k]!]! > ZERO_M) d += dist[cEdges[k]!]!;
      const end = head[cEdges[k1 - 1]!]!;
      cEnd[4 * c] = lon[end]!;
      cEnd[4 * c + 1] = lat[end]!;
      cEnd[4 * c + 2] = end;
      cEnd[4 * c + 3] = d;
      const dx = lon[end]! - ax,
        dy = lat[end]! - ay,
        l2 = dx * dx + dy * dy;
      let far = 0;
      for (let k = k0; k < k1 - 1; k++) {
        const h = head[cEdges[k]!]!,
          px = lon[h]! - ax,
          py = lat[h]! - ay;
        // to the chord as a segment: a chain may double back past its ends, or end where it started
        const t = l2 > 0 ? Math.min(1, Math.max(0, (px * dx + py * dy) / l2)) : 0;
        const ex = px - t * dx,
          ey = py - t * dy;
        far = Math.max(far, ex * ex + ey * ey);
      }
      cDev[c] = f32Up(Math.sqrt(far));
      cWay[c] = chainStart(g, c).way;
    }
  }
  if (!say) tSay.fill(LOOK | (LOOK << 8));
  else
    for (let j = 0; j < jNode.length; j++)
      for (let c = cFirst[j]!; c < cFirst[j + 1]!; c++) {
        const v = head[cEdges[cEdgeFirst[c + 1]! - 1]!]!,
          a = chainEnd(g, c, jNode[j]!, lon[jNode[j]!]!, lat[jNode[j]!]!);
        for (let t = g.tFirst[c]!; t < g.tFirst[c + 1]!; t++) {
          const b = chainStart(g, g.tHead[t]!);
          if (wayRoundabout[a.way] === 1 || wayRoundabout[b.way] === 1) {
            tSay[t] = LOOK | (LOOK << 8);
            continue;
          }
          const says = (nameOf: (w: number) => string) =>
            inputCode(junctionInput(g, v, a, b, lon[v]!, lat[v]!, nameOf));
          const e = says(en);
          // the same street: nothing it says depends on the language of the name
          tSay[t] = e | ((wayName[a.way] === wayName[b.way] ? e : says(ar)) << 8);
        }
      }
  return { cEnd, cDev, cWay, tSay };
}
