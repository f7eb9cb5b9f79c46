import { readGraphFile, readGraphFileShared, writeGraphFile, type GraphFileContents } from './graph-file.js';
import type { CHArrays } from './ch-build.js';

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
 * - Junctions and chains (ChainArrays, import/roads/chains.ts): the contraction hierarchy (ch*, see ch-build.ts /
 *   ch-query.ts) is built over the junctions alone, its original edges being chains of road edges.
 */
export interface RoadGraph extends CHArrays, ChainArrays {
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
 * The graph the hierarchy is built over: junction j is road graph node jNode[j] (ascending); chain c (CSR by its
 * first junction: cFirst) leads to junction cHead[c] in cMs[c] ms over the road edges cEdges[cEdgeFirst[c]..
 * cEdgeFirst[c + 1]], in driving order. jBits has bit v set when node v is a junction. A graph file of version 1
 * has no chains: every node is a junction and every road edge its own chain (jNode, cEdgeFirst and cEdges empty,
 * cFirst / cHead / cMs the road graph's first / head / ms).
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

export interface GraphMeta {
  version: 1 | 2;
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
  'rank',
  'chTail',
  'chHead',
  'chW',
  'chA',
  'chB',
  'upFirst',
  'upEdge',
  'dnFirst',
  'dnEdge',
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

/** Sections a version 1 file (no chains) lacks. */
const CHAIN_ARRAYS = new Set<string>(['jBits', 'jNode', 'cFirst', 'cHead', 'cMs', 'cEdgeFirst', 'cEdges']);

function roadGraph(path: string, { meta, sections }: GraphFileContents): RoadGraph {
  const version = (meta as { version?: number }).version;
  if (version !== 1 && version !== 2)
    throw new Error(`${path}: unsupported road graph version; re-run \`svcmaps import\``);
  for (const k of ARRAYS)
    if (!sections[k] && !(version === 1 && CHAIN_ARRAYS.has(k)))
      throw new Error(`${path}: section ${k} is missing; re-run \`svcmaps import\``);
  const g = { meta: meta as unknown as GraphMeta, ...(sections as unknown as Omit<RoadGraph, 'meta'>) };
  if (version === 1) Object.assign(g, identityChains(g));
  return g;
}

/** A version 1 graph read as one with chains: every node a junction, every road edge a chain of its own. */
function identityChains(g: Pick<RoadGraph, 'first' | 'head' | 'ms'>): ChainArrays {
  const n = g.first.length - 1;
  return {
    jBits: new Uint8Array((n + 7) >>> 3).fill(0xff),
    jNode: new Uint32Array(0),
    cFirst: g.first,
    cHead: g.head,
    cMs: g.ms,
    cEdgeFirst: new Uint32Array(0),
    cEdges: new Uint32Array(0),
  };
}

/** Grid cell of a coordinate (clamped to the grid). */
export function cellOf(g: RoadGraph, lat: number, lon: number): [number, number] {
  const { minLat, minLon, cell, rows, cols } = g.meta.grid;
  const r = Math.min(rows - 1, Math.max(0, Math.floor((lat - minLat) / cell)));
  const c = Math.min(cols - 1, Math.max(0, Math.floor((lon - minLon) / cell)));
  return [r, c];
}
