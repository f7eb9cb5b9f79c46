import type { CHArrays } from './build/ch-build.js';

/** The road graph's shape, which every stage reads: graph.ts loads and saves it, build/route-summary.ts sums it up. */

/**
 * The road graph as flat typed arrays (CSR), exactly as stored in `<data>/roads.graph`.
 *
 * - Nodes 0..baseNodes-1 are OSM nodes of drivable ways; nodes baseNodes..n-1 are copies of turn-restricted
 *   junctions (node splitting, see restrictions.ts). Copies repeat their junction's coordinates.
 * - Edges are directed road segments between consecutive way nodes: `first[u]..first[u+1]` are u's out-edges.
 *   Weights are integer milliseconds of driving time; `dist` is metres.
 * - Segments are the undirected pieces of way geometry used for snapping; each lists the graph edges running
 *   a->b (`segEdges[segFirst[2s]..]`) and b->a (`segEdges[segFirst[2s+1]..]`), since a split junction has
 *   several copies of the same physical segment.
 * - Junctions and chains (ChainArrays, import/roads/chains.ts) and the turns between chains (TurnArrays,
 *   import/roads/turns.ts): the contraction hierarchy (ch*, see ch-build.ts / ch-query.ts) is built over chains as
 *   nodes and turns as edges (edge-based, so turn costs are part of every search).
 */
export interface RoadGraph extends CHArrays, ChainArrays, RouteSummary, TurnArrays {
  meta: GraphMeta;
  lat: Float64Array;
  lon: Float64Array;
  first: Uint32Array;
  head: Uint32Array;
  ms: Uint32Array;
  dist: Float32Array;
  way: Uint32Array;
  wayCls: Uint8Array;
  wayRoundabout: Uint8Array;
  wayName: Uint32Array;
  segA: Uint32Array;
  segB: Uint32Array;
  segFirst: Uint32Array;
  segEdges: Uint32Array;
  /** 1 when the segment's connected component is tiny (parking islands, clipped bits): snapping avoids them. */
  segTiny: Uint8Array;
  cellFirst: Uint32Array;
  cellSeg: Uint32Array;
}

/**
 * Junctions and chains: junction j is road graph node jNode[j] (ascending); chain c (CSR by its first junction:
 * cFirst) leads to junction cHead[c] in cMs[c] ms over the road edges cEdges[cEdgeFirst[c]..cEdgeFirst[c + 1]], in
 * driving order. jBits has bit v set when node v is a junction.
 */
export interface ChainArrays {
  jBits: Uint8Array;
  jNode: Uint32Array;
  cFirst: Uint32Array;
  cHead: Uint32Array;
  cMs: Uint32Array;
  cEdgeFirst: Uint32Array;
  cEdges: Uint32Array;
}

/**
 * The graph the hierarchy is built over: chains are its nodes, turns its edges. Turn t (CSR by the chain it leaves:
 * tFirst) leads onto chain tHead[t] and costs tMs[t] ms; the hierarchy's original edge t weighs tMs[t] +
 * cMs[tHead[t]]. cIn[cInFirst[j]..cInFirst[j + 1]] are the chains that end at junction j.
 */
export interface TurnArrays {
  tFirst: Uint32Array;
  tHead: Uint32Array;
  tMs: Uint16Array;
  cInFirst: Uint32Array;
  cIn: Uint32Array;
}

/**
 * What a route needs of a chain it drives whole, and of the turn onto it, without reading the chain's road edges
 * (path.ts builds a route of chains; a cross-country one drives ~10^3 chains of ~10^4 road edges):
 * - cEnd[4c..4c + 3]: the junction it ends at (longitude, latitude, node) and its length in metres (of the road
 *   edges a route keeps as pieces: longer than ZERO_M), side by side, so a route reads them in one cache line;
 * - cDev[c]: how far its inner points stray from the straight line between its ends, in degrees, longitude
 *   unscaled. A flat map scales longitude by cos(latitude) <= 1, which only brings points closer to a line, so cDev
 *   bounds the deviation a route's overview measures on any map (overview.ts). Rounded up, never down, to float32;
 * - cWay[c]: the way of its first road edge with geometry (the street a turn onto it leads onto);
 * - tSay[t]: what a maneuver says at turn t, in English (low byte) and in Arabic (high byte), as junction.ts
 *   inputCode() writes it: nothing (0, most junctions of a long route), a turn, fork, merge or continue, or LOOK
 *   (a roundabout at either side: its exits depend on where the route entered it). What junction.ts says there
 *   depends on the two chains alone, so maneuvers.ts passes or announces a turn without reading either chain.
 */
export interface RouteSummary {
  cEnd: Float64Array;
  cDev: Float32Array;
  cWay: Uint32Array;
  tSay: Uint16Array;
}

/** Road graph file version: 3 since the hierarchy is over turns between chains. */
export const GRAPH_VERSION = 3;

export interface GraphMeta {
  version: typeof GRAPH_VERSION;
  buildId: string;
  source: string;
  builtAt: string;
  nodes: number;
  baseNodes: number;
  edges: number;
  names: Array<[string, string, string, string]>;
  grid: { minLat: number; minLon: number; cell: number; rows: number; cols: number };
  stats: Record<string, number>;
}
