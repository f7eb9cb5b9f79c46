/** Snapping support built at import time: tiny-component flags and a uniform grid over segment bounding boxes. */

/**
 * Strongly connected components smaller than this are islands: a private car park, or the stub of a clipped
 * one-way carriageway at the extract's edge that can be entered but never left. Snapping avoids them whenever
 * a segment of a large component is in range, as OSRM does, so such islands do not make routes unroutable.
 */
const TINY_COMPONENT_NODES = 200;

/**
 * Flags segments with an end node in a tiny strongly connected component (iterative Tarjan over the graph). With
 * `copies`, an end node counts by the largest component among it and its copies (turn-restriction node copies,
 * numbered from baseNodes on): a via-way restriction can leave an original node reachable only through its copy.
 */
export function tinyComponents(
  n: number,
  first: Uint32Array,
  head: Uint32Array,
  a: Uint32Array,
  b: Uint32Array,
  copies?: { baseNodes: number; copyBase: ArrayLike<number> },
): Uint8Array {
  const index = new Int32Array(n).fill(-1),
    low = new Int32Array(n),
    comp = new Int32Array(n).fill(-1);
  const onStack = new Uint8Array(n),
    stack: number[] = [],
    sizes: number[] = [];
  const callV: number[] = [],
    callI: number[] = [];
  let next = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    callV.push(root);
    callI.push(first[root]!);
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = 1;
    while (callV.length) {
      const v = callV[callV.length - 1]!,
        i = callI[callI.length - 1]!;
      if (i < first[v + 1]!) {
        callI[callI.length - 1] = i + 1;
        const w = head[i]!;
        if (index[w] === -1) {
          index[w] = low[w] = next++;
          stack.push(w);
          onStack[w] = 1;
          callV.push(w);
          callI.push(first[w]!);
        } else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      callV.pop();
      callI.pop();
      if (callV.length) {
        const u = callV[callV.length - 1]!;
        low[u] = Math.min(low[u]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const c = sizes.push(0) - 1;
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          comp[w] = c;
          sizes[c]!++;
        } while (w !== v);
      }
    }
  }
  let largest = 1;
  for (const z of sizes) largest = Math.max(largest, z);
  // On a graph that is itself small (a test extract), only components below its largest one count as tiny.
  const limit = Math.min(TINY_COMPONENT_NODES, largest);
  const best = copies ? new Uint32Array(copies.baseNodes) : undefined;
  if (best && copies) {
    for (let v = 0; v < copies.baseNodes; v++) best[v] = sizes[comp[v]!]!;
    for (let i = 0; i < copies.copyBase.length; i++) {
      const v = copies.copyBase[i]!;
      best[v] = Math.max(best[v]!, sizes[comp[copies.baseNodes + i]!]!);
    }
  }
  const small = (v: number) => (best ? best[v]! : sizes[comp[v]!]!) < limit;
  const tiny = new Uint8Array(a.length);
  for (let s = 0; s < a.length; s++) tiny[s] = small(a[s]!) || small(b[s]!) ? 1 : 0;
  return tiny;
}

export interface SegmentGrid {
  meta: { minLat: number; minLon: number; cell: number; rows: number; cols: number };
  cellFirst: Uint32Array;
  cellSeg: Uint32Array;
}

/**
 * Uniform grid (CSR: cell -> segment ids) over the segments' bounding boxes. A grid beats a k-d tree of points
 * here because segments can be long (a motorway segment may span a kilometre): each segment is filed under every
 * cell its box touches, so a ring search around the query point finds it. Cell size adapts so the grid stays
 * under ~4 M cells for a large country.
 */
export function buildSegmentGrid(lat: Float64Array, lon: Float64Array, a: Uint32Array, b: Uint32Array): SegmentGrid {
  let minLat = Infinity,
    minLon = Infinity,
    maxLat = -Infinity,
    maxLon = -Infinity;
  for (let s = 0; s < a.length; s++) {
    for (const v of [a[s]!, b[s]!]) {
      minLat = Math.min(minLat, lat[v]!);
      maxLat = Math.max(maxLat, lat[v]!);
      minLon = Math.min(minLon, lon[v]!);
      maxLon = Math.max(maxLon, lon[v]!);
    }
  }
  if (!a.length) {
    minLat = minLon = 0;
    maxLat = maxLon = 0;
  }
  const area = Math.max(1e-6, (maxLat - minLat) * (maxLon - minLon));
  const cell = Math.max(0.002, Math.sqrt(area / 4e6));
  const rows = Math.max(1, Math.ceil((maxLat - minLat) / cell) + 1);
  const cols = Math.max(1, Math.ceil((maxLon - minLon) / cell) + 1);
  const cellFirst = new Uint32Array(rows * cols + 1);
  const each = (s: number, f: (c: number) => void) => {
    const la = lat[a[s]!]!,
      lb = lat[b[s]!]!,
      oa = lon[a[s]!]!,
      ob = lon[b[s]!]!;
    const r0 = Math.floor((Math.min(la, lb) - minLat) / cell),
      r1 = Math.floor((Math.max(la, lb) - minLat) / cell);
    const c0 = Math.floor((Math.min(oa, ob) - minLon) / cell),
      c1 = Math.floor((Math.max(oa, ob) - minLon) / cell);
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) f(r * cols + c);
  };
  for (let s = 0; s < a.length; s++) each(s, (c) => cellFirst[c + 1]!++);
  for (let c = 0; c < rows * cols; c++) cellFirst[c + 1]! += cellFirst[c]!;
  const fill = cellFirst.slice(0, rows * cols);
  const cellSeg = new Uint32Array(cellFirst[rows * cols]!);
  for (let s = 0; s < a.length; s++) each(s, (c) => (cellSeg[fill[c]!++] = s));
  return { meta: { minLat, minLon, cell, rows, cols }, cellFirst, cellSeg };
}
