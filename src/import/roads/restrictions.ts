/**
 * Turn restrictions by node splitting. A restricted via node v gets one copy per incoming edge (the first copy
 * keeps v's id); an incoming edge e now ends at its own copy, and that copy's out-edges are only the turns the
 * restrictions allow after e (`no_*` removes the to-edge, `only_*` keeps only it). Plain Dijkstra/CH over the
 * split graph then respects the restrictions exactly, with no change to the search code.
 *
 * Limits: only via-node restrictions (via-way ones are counted and skipped); `from`/`to` must touch the via node;
 * day/time-conditional restrictions are treated as always on. The graph grows by (in-degree x out-degree) edges
 * per restricted junction, which is small (a few hundred junctions in a city).
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
  const byVia = new Map<number, Restriction[]>();
  for (const r of restrictions) {
    if (!r.from.length || !r.to.length) continue;
    let l = byVia.get(r.via);
    if (!l) byVia.set(r.via, (l = []));
    l.push(r);
  }
  // Incoming edges of each restricted via, and the copy each incoming edge leads to.
  const incoming = new Map<number, number[]>();
  for (let i = 0; i < m; i++) {
    const h = e.head[i]!;
    if (byVia.has(h)) {
      let l = incoming.get(h);
      if (!l) incoming.set(h, (l = []));
      l.push(i);
    }
  }
  const copyOfIn = new Map<number, number>(); // base edge -> node id it now ends at
  const copyBase: number[] = [];
  let next = baseNodes;
  for (const [v, ins] of incoming) {
    ins.forEach((edge, k) => {
      if (k === 0) copyOfIn.set(edge, v);
      else {
        copyOfIn.set(edge, next++);
        copyBase.push(v);
      }
    });
  }
  const allowed = (inEdge: number, outEdge: number, rs: Restriction[]): boolean => {
    for (const r of rs) {
      if (!r.from.includes(inEdge)) continue;
      const hit = r.to.includes(outEdge);
      if (r.only ? !hit : hit) return false;
    }
    return true;
  };
  const tail: number[] = [],
    head: number[] = [],
    base: number[] = [];
  for (let i = 0; i < m; i++) {
    const a = e.tail[i]!;
    const h = copyOfIn.get(i) ?? e.head[i]!;
    const rs = byVia.get(a);
    const ins = rs ? incoming.get(a) : undefined;
    if (!rs || !ins) {
      tail.push(a);
      head.push(h);
      base.push(i);
      continue;
    }
    for (const inEdge of ins) {
      if (!allowed(inEdge, i, rs)) continue;
      tail.push(copyOfIn.get(inEdge)!);
      head.push(h);
      base.push(i);
    }
  }
  return {
    nodes: next,
    copyBase,
    tail: Uint32Array.from(tail),
    head: Uint32Array.from(head),
    base: Uint32Array.from(base),
    applied: [...byVia.values()].reduce((s, l) => s + l.length, 0),
  };
}
