import type { ChainArrays, TurnArrays } from '../../routing/road-graph.js';
import { turnAngle, turnMs, U_TURN_MS } from '../../routing/build/turn-cost.js';

/**
 * The turns between chains (an edge-based graph, as OSRM's): turn t leads from chain p, at the junction p ends at,
 * onto chain tHead[t] leaving that junction, and costs tMs[t] (routing/build/turn-cost.ts). The contraction hierarchy is
 * built over chains as nodes and turns as edges, so turn costs and turn restrictions (already in the junction
 * copies: a chain ends at the copy its restriction allows) are part of every search. A U-turn is a turn only where
 * the chain has no other way on.
 *
 * `roads` is the junction flag array (chains.ts junctionFlags): the number of road segments meeting at each node.
 */
export function buildTurns(
  g: { first: Uint32Array; head: Uint32Array; lat: Float64Array; lon: Float64Array },
  c: ChainArrays,
  roads: Uint8Array,
): TurnArrays {
  const { head, lat, lon } = g;
  const { jNode, cFirst, cHead, cEdgeFirst, cEdges } = c;
  const C = cHead.length,
    J = jNode.length;
  // the node each chain's last road edge comes from (its tail junction for a chain of one road edge)
  const before = new Uint32Array(C);
  for (let j = 0; j < J; j++)
    for (let p = cFirst[j]!; p < cFirst[j + 1]!; p++) {
      const k = cEdgeFirst[p + 1]! - 1;
      before[p] = k > cEdgeFirst[p]! ? head[cEdges[k - 1]!]! : jNode[j]!;
    }
  const tFirst = new Uint32Array(C + 1);
  let heads = new Uint32Array(2 * C),
    costs = new Uint16Array(2 * C),
    T = 0;
  const push = (d: number, ms: number) => {
    if (T === heads.length) {
      const h = new Uint32Array(2 * T),
        m = new Uint16Array(2 * T);
      h.set(heads);
      m.set(costs);
      heads = h;
      costs = m;
    }
    heads[T] = d;
    costs[T++] = Math.min(ms, 0xffff);
  };
  for (let p = 0; p < C; p++) {
    tFirst[p] = T;
    const j = cHead[p]!,
      v = jNode[j]!,
      a = before[p]!;
    const back = (d: number) => {
      const b = head[cEdges[cEdgeFirst[d]!]!]!;
      return lat[b] === lat[a] && lon[b] === lon[a];
    };
    let others = 0;
    for (let d = cFirst[j]!; d < cFirst[j + 1]!; d++) if (!back(d)) others++;
    for (let d = cFirst[j]!; d < cFirst[j + 1]!; d++) {
      if (back(d)) {
        if (!others) push(d, U_TURN_MS);
        continue;
      }
      const b = head[cEdges[cEdgeFirst[d]!]!]!;
      push(d, turnMs(turnAngle(lat[a]!, lon[a]!, lat[v]!, lon[v]!, lat[b]!, lon[b]!), roads[v]!));
    }
  }
  tFirst[C] = T;
  // chains by the junction they end at (a target's chain is entered from these)
  const cInFirst = new Uint32Array(J + 1);
  for (let p = 0; p < C; p++) cInFirst[cHead[p]! + 1]!++;
  for (let j = 0; j < J; j++) cInFirst[j + 1]! += cInFirst[j]!;
  const fill = cInFirst.slice(0, J),
    cIn = new Uint32Array(C);
  for (let p = 0; p < C; p++) cIn[fill[cHead[p]!]!++] = p;
  return { tFirst, tHead: heads.slice(0, T), tMs: costs.slice(0, T), cInFirst, cIn };
}
