import { readGraphFile, readGraphFileShared, writeGraphFile, type GraphFileContents } from './build/graph-file.js';
import type { CHArrays } from './build/ch-build.js';
import { searchAdjacency } from './build/ch-search-blocks.js';
import { routeSummaries, type RouteSummary } from './build/route-summary.js';

export const GRAPH_FILE = 'roads.graph';

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

/** Road graph file version: 3 since the hierarchy is over turns between chains. */
export const GRAPH_VERSION = 3;

interface GraphMeta {
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

const ARRAYS = [
  'lat',
  'lon',
  'first',
  'head',
  'ms',
  'dist',
  'way',
  'wayCls',
  'wayRoundabout',
  'wayName',
  'segA',
  'segB',
  'segFirst',
  'segEdges',
  'segTiny',
  'cellFirst',
  'cellSeg',
  'jBits',
  'jNode',
  'cFirst',
  'cHead',
  'cMs',
  'cEdgeFirst',
  'cEdges',
  'cEnd',
  'cDev',
  'cWay',
  'tFirst',
  'tHead',
  'tMs',
  'cInFirst',
  'cIn',
  'tSay',
  'rank',
  'chTail',
  'chHead',
  'chW',
  'chA',
  'chB',
  'chFirst',
  'chAdj',
] as const;

export function saveGraph(path: string, g: RoadGraph): void {
  const sections: Record<string, RoadGraph[(typeof ARRAYS)[number]]> = {};
  for (const k of ARRAYS) sections[k] = g[k];
  writeGraphFile(path, g.meta as unknown as Record<string, unknown>, sections);
}

/** With `shared`, the arrays live in one SharedArrayBuffer that worker threads can map (see route-pool.ts). */
export function loadGraph(path: string, opts: { shared?: boolean } = {}): RoadGraph {
  return roadGraph(path, readGraphFile(path, opts));
}

/** loadGraph with `shared`, read without blocking the event loop (the server's start-up and reload). */
export async function loadGraphShared(path: string): Promise<RoadGraph> {
  return roadGraph(path, await readGraphFileShared(path));
}

/** Sections a graph file written before them lacks, computed at load instead (route-summary.ts). */
const DERIVED = new Set<string>(['cEnd', 'cDev', 'cWay', 'tSay']);
/**
 * Files written before the search blocks (chFirst, chAdj) hold the search graphs as up and down lists of edge ids:
 * the blocks are made from those at load (~0.5 s at 600 copies; a new import writes them).
 */
const LISTS = ['upFirst', 'upEdge', 'dnFirst', 'dnEdge'] as const;

function roadGraph(path: string, { meta, sections }: GraphFileContents): RoadGraph {
  const version = (meta as { version?: number }).version;
  if (version !== GRAPH_VERSION)
    throw new Error(`${path}: road graph version ${version ?? '?'} is not ${GRAPH_VERSION}; re-run \`svcmaps import\``);
  const lists = !sections.chAdj && LISTS.every((k) => sections[k]);
  for (const k of ARRAYS)
    if (!sections[k] && !DERIVED.has(k) && !(lists && (k === 'chFirst' || k === 'chAdj')))
      throw new Error(`${path}: section ${k} is missing; re-run \`svcmaps import\``);
  const g = { meta: meta as unknown as GraphMeta, ...(sections as unknown as Omit<RoadGraph, 'meta'>) };
  const shared = g.lat.buffer instanceof SharedArrayBuffer;
  if (lists) {
    const [upFirst, upEdge, dnFirst, dnEdge] = LISTS.map((k) => sections[k] as Uint32Array);
    const memory = (bytes: number) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
    Object.assign(g, searchAdjacency(g.chHead, g.chTail, g.chW, upFirst!, upEdge!, dnFirst!, dnEdge!, memory));
  }
  // (its turns all say LOOK: what each says would take seconds at country scale; maneuvers.ts looks at each)
  if ([...DERIVED].some((k) => !sections[k])) Object.assign(g, routeSummaries(g, shared, false));
  return g;
}
