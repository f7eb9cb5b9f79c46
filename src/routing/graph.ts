import { readGraphFile, readGraphFileShared, writeGraphFile, type GraphFileContents } from './build/graph-file.js';
import { searchAdjacency } from './build/ch-search-blocks.js';
import { routeSummaries } from './build/route-summary.js';
import { GRAPH_VERSION, type GraphMeta, type RoadGraph } from './road-graph.js';

export const GRAPH_FILE = 'roads.graph';

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
