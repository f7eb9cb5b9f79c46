import FlatQueue from 'flatqueue';

/**
 * Contraction hierarchy preprocessing (Geisberger et al. 2008), the technique OSRM uses.
 *
 * Nodes are contracted one by one in order of priority = level + added/removed edges + added/removed hops (a
 * hop = an original edge a shortcut stands for; RoutingKit's formula), which keeps shortcuts short and the
 * hierarchy balanced. Contracting v adds a shortcut u->w (weight w(u,v)+w(v,w)) unless a witness path u->w not
 * through v is at most as short. Witness searches are Dijkstra bounded by a settle limit and stop once every
 * target is settled; a search cut short only adds a superfluous shortcut, never a wrong distance.
 * Lazy updates only: a popped node is re-simulated and pushed back if it no longer beats the next one, and the
 * shortcuts of that simulation are the ones inserted. Eager re-simulation of all neighbours after each
 * contraction (the textbook variant) was measured 6-15x slower on grids, for a hierarchy of the same size.
 */
export interface BaseGraph {
  n: number;
  first: Uint32Array;
  head: Uint32Array;
  ms: Uint32Array;
}

export interface CH {
  rank: Uint32Array;
  chTail: Uint32Array;
  chHead: Uint32Array;
  chW: Uint32Array;
  /** Shortcut children (CH edge ids); for an original edge chA = -1 - (graph edge id) and chB = -1. */
  chA: Int32Array;
  chB: Int32Array;
  upFirst: Uint32Array;
  upEdge: Uint32Array;
  dnFirst: Uint32Array;
  dnEdge: Uint32Array;
  /** Nodes left uncontracted (see CHOptions.coreDegree); 0 for a complete hierarchy. */
  coreNodes: number;
}

const WITNESS_SETTLE = 100;

class Edges {
  tail: number[] = [];
  head: number[] = [];
  w: number[] = [];
  a: number[] = [];
  b: number[] = [];
  hops: number[] = [];
  add(t: number, h: number, w: number, a: number, b: number, hops: number): number {
    this.tail.push(t);
    this.head.push(h);
    this.w.push(w);
    this.a.push(a);
    this.b.push(b);
    this.hops.push(hops);
    return this.tail.length - 1;
  }
}

export interface CHOptions {
  /**
   * Stop contracting when the remaining (core) graph's average out-degree exceeds this: the last, densest nodes
   * cost O(degree^3) each to contract, which on a million-node grid would take hours in JS. The core's edges stay
   * searchable in both directions (a "core-CH"), so queries remain exact; they just run plain Dijkstra inside the
   * core. Road networks usually finish without ever reaching the limit.
   */
  coreDegree?: number;
  /** Settle limit of each witness search (default 100). */
  witnessSettle?: number;
  progress?: (done: number, total: number, coreAvgDegree: number) => void;
}

export function buildCH(g: BaseGraph, opts: CHOptions = {}): CH {
  const progress = opts.progress;
  const coreDegree = opts.coreDegree ?? 16;
  const settleLimit = opts.witnessSettle ?? WITNESS_SETTLE;
  const n = g.n;
  const E = new Edges();
  // Active adjacency (edges between not-yet-contracted nodes only), as edge ids.
  const out: number[][] = Array.from({ length: n }, () => []);
  let live = 0; // edges between uncontracted nodes
  const inn: number[][] = Array.from({ length: n }, () => []);
  const addOrImprove = (u: number, v: number, w: number, a: number, b: number, hops: number): boolean => {
    for (const e of out[u]!) {
      if (E.head[e] !== v) continue;
      if (E.w[e]! <= w) return false;
      E.w[e] = w;
      E.a[e] = a;
      E.b[e] = b;
      E.hops[e] = hops; // safe: an edge between live nodes is nobody's child yet
      return true;
    }
    const e = E.add(u, v, w, a, b, hops);
    out[u]!.push(e);
    inn[v]!.push(e);
    live++;
    return true;
  };
  for (let u = 0; u < n; u++) {
    for (let i = g.first[u]!; i < g.first[u + 1]!; i++)
      if (g.head[i] !== u) addOrImprove(u, g.head[i]!, g.ms[i]!, -1 - i, -1, 1);
  }
  const contracted = new Uint8Array(n);
  const level = new Uint32Array(n);
  // Witness search state, reused (stamps avoid clearing the distance array).
  const dist = new Float64Array(n);
  const stamp = new Uint32Array(n);
  let run = 0;
  const pq = new FlatQueue<number>();
  const isTarget = new Uint32Array(n);
  let targetsLeft = 0;
  /** Dijkstra from s avoiding `skip`; stops past maxW, after `limit` settled nodes, or once every target is settled. */
  const witness = (s: number, skip: number, maxW: number, limit: number) => {
    run++;
    pq.clear();
    dist[s] = 0;
    stamp[s] = run;
    pq.push(s, 0);
    let settled = 0;
    while (pq.length) {
      const d = pq.peekValue()!;
      const u = pq.pop()!;
      if (d > dist[u]!) continue;
      if (d > maxW || ++settled > limit) break;
      if (isTarget[u] === run && --targetsLeft === 0) break;
      for (const e of out[u]!) {
        const v = E.head[e]!;
        if (v === skip) continue;
        const nd = d + E.w[e]!;
        if (stamp[v] !== run || nd < dist[v]!) {
          dist[v] = nd;
          stamp[v] = run;
          pq.push(v, nd);
        }
      }
    }
  };
  const shortcut: number[] = []; // flat [u, w, weight, inEdge, outEdge] tuples of the last contraction
  /** Computes the shortcuts needed to contract v (left in `shortcut`); returns v's priority. */
  const simulate = (v: number): number => {
    shortcut.length = 0;
    const ins = inn[v]!,
      outs = out[v]!;
    let maxOut = 0,
      removedHops = 0,
      addedHops = 0;
    for (const e of outs) {
      maxOut = Math.max(maxOut, E.w[e]!);
      removedHops += E.hops[e]!;
    }
    for (const e of ins) removedHops += E.hops[e]!;
    for (const ei of ins) {
      const u = E.tail[ei]!;
      const wi = E.w[ei]!;
      run++; // the witness search takes the next run id: mark its targets with it first
      targetsLeft = 0;
      for (const eo of outs)
        if (E.head[eo] !== u && isTarget[E.head[eo]!] !== run) {
          isTarget[E.head[eo]!] = run;
          targetsLeft++;
        }
      run--;
      witness(u, v, wi + maxOut, settleLimit);
      for (const eo of outs) {
        const x = E.head[eo]!;
        if (x === u) continue;
        const w = wi + E.w[eo]!;
        if (stamp[x] === run && dist[x]! <= w) continue;
        shortcut.push(u, x, w, ei, eo);
        addedHops += E.hops[ei]! + E.hops[eo]!;
      }
    }
    const added = shortcut.length / 5;
    const removed = ins.length + outs.length;
    return level[v]! + (removed ? added / removed + addedHops / removedHops : 0);
  };
  const priority = simulate;
  const order = new FlatQueue<number>();
  for (let v = 0; v < n; v++) order.push(v, priority(v));
  const rank = new Uint32Array(n);
  let done = 0;
  while (order.length) {
    if (live / (n - done) > coreDegree) break;
    const v = order.pop()!;
    if (contracted[v]) continue;
    const p = priority(v);
    if (order.length && p > order.peekValue()!) {
      order.push(v, p);
      continue;
    }
    // `priority(v)` just computed v's shortcuts (witness searches included): insert those instead of redoing them
    for (let k = 0; k < shortcut.length; k += 5)
      addOrImprove(
        shortcut[k]!,
        shortcut[k + 1]!,
        shortcut[k + 2]!,
        shortcut[k + 3]!,
        shortcut[k + 4]!,
        E.hops[shortcut[k + 3]!]! + E.hops[shortcut[k + 4]!]!,
      );
    contracted[v] = 1;
    rank[v] = done++;
    if (progress && done % 5_000 === 0) progress(done, n, live / (n - done));
    live -= out[v]!.length + inn[v]!.length;
    // Detach v from the live graph (neighbours are re-evaluated lazily, when popped).
    const nbs = new Set<number>();
    for (const e of out[v]!) nbs.add(E.head[e]!);
    for (const e of inn[v]!) nbs.add(E.tail[e]!);
    for (const x of nbs) {
      out[x] = out[x]!.filter((e) => E.head[e] !== v);
      inn[x] = inn[x]!.filter((e) => E.tail[e] !== v);
      level[x] = Math.max(level[x]!, level[v]! + 1);
    }
    out[v] = [];
    inn[v] = [];
  }
  // The core: every node not contracted, ranked above all others; edges among them go in both search graphs.
  const core = new Uint8Array(n);
  const coreNodes = n - done;
  for (let v = 0; v < n; v++)
    if (!contracted[v]) {
      core[v] = 1;
      rank[v] = done++;
    }
  return { ...finish(n, rank, E, core), coreNodes };
}

/** The searchable part of a hierarchy (what the graph file stores). */
export type CHArrays = Omit<CH, 'coreNodes'>;

/** Splits the edges into the upward graph (by tail) and the reversed downward graph (by head), CSR each; core edges go in both. */
function finish(n: number, rank: Uint32Array, E: Edges, core: Uint8Array): CHArrays {
  const m = E.tail.length;
  const chTail = Uint32Array.from(E.tail),
    chHead = Uint32Array.from(E.head),
    chW = Uint32Array.from(E.w);
  const chA = Int32Array.from(E.a),
    chB = Int32Array.from(E.b);
  const upFirst = new Uint32Array(n + 1),
    dnFirst = new Uint32Array(n + 1);
  const isCore = (e: number) => core[chHead[e]!] === 1 && core[chTail[e]!] === 1;
  const isUp = (e: number) => isCore(e) || rank[chHead[e]!]! > rank[chTail[e]!]!;
  const isDown = (e: number) => isCore(e) || rank[chHead[e]!]! < rank[chTail[e]!]!;
  for (let e = 0; e < m; e++) {
    if (isUp(e)) upFirst[chTail[e]! + 1]!++;
    if (isDown(e)) dnFirst[chHead[e]! + 1]!++;
  }
  for (let u = 0; u < n; u++) {
    upFirst[u + 1]! += upFirst[u]!;
    dnFirst[u + 1]! += dnFirst[u]!;
  }
  const upEdge = new Uint32Array(upFirst[n]!),
    dnEdge = new Uint32Array(dnFirst[n]!);
  const uf = upFirst.slice(0, n),
    df = dnFirst.slice(0, n);
  for (let e = 0; e < m; e++) {
    if (isUp(e)) upEdge[uf[chTail[e]!]!++] = e;
    if (isDown(e)) dnEdge[df[chHead[e]!]!++] = e;
  }
  return { rank, chTail, chHead, chW, chA, chB, upFirst, upEdge, dnFirst, dnEdge };
}
