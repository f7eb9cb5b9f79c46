import { GrowU32 } from './grow.js';
import { indexOfSorted } from '../../core/sorted.js';

/**
 * Turn restrictions by node splitting. A restricted via node v gets one copy per incoming edge (the first copy
 * keeps v's id); an incoming edge e now ends at its own copy, and that copy's out-edges are only the turns the
 * restrictions allow after e (`no_*` removes the to-edge, `only_*` keeps only it). Plain Dijkstra/CH over the
 * split graph then respects the restrictions exactly, with no change to the search code.
 *
 * Via-way restrictions are applied afterwards, on the split graph, by duplicating their via paths (via-way.ts).
 * Limits: `from`/`to` must touch the via node; day/time-conditional restrictions are treated as always on. The
 * graph grows by (in-degree x out-degree) edges per restricted junction, which is small (a few hundred junctions
 * in a city).
 */
export interface BaseEdges {
  tail: Uint32Array;
  head: Uint32Array;
  way: Uint32Array;
}

export interface Restriction {
  via: number;
  from: number[]; // base edge ids entering via
  to: number[]; // base edge ids leaving via
  only: boolean;
}

export interface SplitResult {
  nodes: number;
  /** Base node of each copy (index i is node baseNodes + i). */
  copyBase: number[];
  /** Graph edges: tail, head, and the base edge each one stands for. */
  tail: Uint32Array;
  head: Uint32Array;
  base: Uint32Array;
  applied: number;
}

export function splitRestrictedNodes(baseNodes: number, e: BaseEdges, restrictions: Restriction[]): SplitResult {
  const m = e.tail.length;
  // Restrictions grouped by via node (sorted typed arrays and a bitset, nothing keyed by node in a Map).
  const rs = restrictions.filter((r) => r.from.length && r.to.length).sort((a, b) => a.via - b.via);
  const vias: number[] = [],
    runStart: number[] = [];
  rs.forEach((r, i) => {
    if (vias[vias.length - 1] !== r.via) {
      vias.push(r.via);
      runStart.push(i);
    }
  });
  runStart.push(rs.length);
  const viaIds = Uint32Array.from(vias);
  const isVia = new Uint8Array((baseNodes + 7) >>> 3);
  for (const v of vias) isVia[v >>> 3]! |= 1 << (v & 7);
  const viaRank = (v: number): number => {
    if (v >= baseNodes || !(isVia[v >>> 3]! & (1 << (v & 7)))) return -1;
    return indexOfSorted(viaIds, v);
  };
  // Incoming edges of each restricted via (CSR by via rank, in edge order), and the copy each one leads to: the
  // first keeps the via's id, the others get new nodes from copyStart[rank] on.
  const V = viaIds.length;
  const inStart = new Uint32Array(V + 1);
  for (let i = 0; i < m; i++) {
    const r = viaRank(e.head[i]!);
    if (r >= 0) inStart[r + 1]!++;
  }
  for (let r = 0; r < V; r++) inStart[r + 1]! += inStart[r]!;
  const inEdges = new Uint32Array(inStart[V]!);
  const fill = inStart.slice(0, V);
  for (let i = 0; i < m; i++) {
    const r = viaRank(e.head[i]!);
    if (r >= 0) inEdges[fill[r]!++] = i;
  }
  const copyStart = new Uint32Array(V);
  const copyBase: number[] = [];
  let next = baseNodes;
  for (let r = 0; r < V; r++) {
    copyStart[r] = next;
    for (let k = inStart[r]! + 1; k < inStart[r + 1]!; k++) {
      copyBase.push(viaIds[r]!);
      next++;
    }
  }
  /** The node incoming edge number k (in inEdges) of via rank r now ends at. */
  const copyAt = (r: number, k: number) => (k === inStart[r]! ? viaIds[r]! : copyStart[r]! + k - inStart[r]! - 1);
  const headOf = (i: number): number => {
    const h = e.head[i]!;
    const r = viaRank(h);
    if (r < 0) return h;
    for (let k = inStart[r]!; k < inStart[r + 1]!; k++) if (inEdges[k] === i) return copyAt(r, k);
    return h;
  };
  const allowed = (inEdge: number, outEdge: number, r: number): boolean => {
    for (let j = runStart[r]!; j < runStart[r + 1]!; j++) {
      const x = rs[j]!;
      if (!x.from.includes(inEdge)) continue;
      const hit = x.to.includes(outEdge);
      if (x.only ? !hit : hit) return false;
    }
    return true;
  };
  const tail = new GrowU32(),
    head = new GrowU32(),
    base = new GrowU32();
  for (let i = 0; i < m; i++) {
    const a = e.tail[i]!;
    const h = headOf(i);
    const r = viaRank(a);
    if (r < 0 || inStart[r] === inStart[r + 1]) {
      tail.push(a);
      head.push(h);
      base.push(i);
      continue;
    }
    for (let k = inStart[r]!; k < inStart[r + 1]!; k++) {
      if (!allowed(inEdges[k]!, i, r)) continue;
      tail.push(copyAt(r, k));
      head.push(h);
      base.push(i);
    }
  }
  return {
    nodes: next,
    copyBase,
    tail: tail.view().slice(),
    head: head.view().slice(),
    base: base.view().slice(),
    applied: rs.length,
  };
}
