import FlatQueue from 'flatqueue';
import { AdjPool, Edges } from './ch-storage.js';
import { searchAdjacency } from './ch-search-blocks.js';

/**
 * Contraction hierarchy preprocessing (Geisberger et al. 2008), the technique OSRM uses.
 *
 * Nodes are contracted one by one in order of priority = level + 2 x added/removed edges + 4 x added/removed
 * hops (a hop = an original edge a shortcut stands for; OSRM weighs the three terms so), which keeps shortcuts
 * short and the hierarchy balanced. Over the turn graph of the 600-copy country, against RoutingKit's equal
 * weights: the contraction 149 s instead of 240 s, 3% fewer shortcuts, search spaces alike. Contracting v adds a shortcut u->w (weight w(u,v)+w(v,w)) unless a witness path u->w not
 * through v is at most as short. Witness searches are Dijkstra bounded by a settle limit and stop once every
 * target is settled; a search cut short only adds a superfluous shortcut, never a wrong distance.
 * Lazy updates only: a popped node is re-simulated and pushed back if it no longer beats the next one, and the
 * shortcuts of that simulation are the ones inserted. Eager re-simulation of all neighbours after each
 * contraction (the textbook variant) was measured 6-15x slower on grids, for a hierarchy of the same size.
 *
 * Memory (n nodes, m0 base edges, M = final CH edges; all typed arrays, nothing per node or per edge on the JS
 * heap, so the footprint is bounded by these sums):
 * - edges (Edges): tail, head, w, a, b, hops = 24 B per edge of capacity. Capacity starts at 2*m0 and doubles;
 *   pages past the last edge are never written, so only ~24 B * edges used are resident. A doubling copies one
 *   array at a time (+8 B per edge of old capacity at most, transiently).
 * - adjacency (AdjPool, one for out-lists, one for in-lists): start/len/cap 12 B per node each, plus a pool of
 *   edge ids of (degree+2) slots per node * 1.25 = ~5 B per base edge + 10 B per node each; a full pool is rebuilt
 *   at 2x its live slots (old + new alive during the copy).
 * - per node: level 4, dist 8, stamp 4, isTarget 4, rank 4, contracted 1, deg 4, priority queue 12 (Uint32 ids +
 *   Float64 keys, fixed capacity n) = 41 B; with both adjacency headers ~65 B per node in all.
 * - finish(): the five output edge arrays are copies in the new edge order (20 B * M, through a 4 B * M map of
 *   new ids), each made right before its growable source is dropped; the up and down lists (8 B per node, ~4 B * M
 *   each, core edges in both), then the search blocks made from them (chFirst, chAdj: 8 B per node + 12 B * M).
 *   The adjacency, queues and search state are unreachable by then (contract() has returned) and hops is dropped.
 * At 600 copies (n = 6.8M, m0 = 13.9M, M = 25.3M): ~0.6 GB edges (capacity 27.8M, no doubling), ~0.45 GB
 * adjacency, ~0.3 GB other per-node state. Measured: the whole import peaks at 2.26 GB (the number[] and
 * number[][] layout this replaced: 6.29 GB).
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
  /**
   * The two search graphs, one block per node in one array: node u's block starts at chAdj[chFirst[u]] with its
   * count of up edges, then one (head, weight, edge id) triple per up edge and one (tail, weight, edge id) per down
   * edge (see ch-search-blocks.ts).
   */
  chFirst: Uint32Array;
  chAdj: Uint32Array;
  /** Nodes left uncontracted (see CHOptions.coreDegree); 0 for a complete hierarchy. */
  coreNodes: number;
}

const WITNESS_SETTLE = 100;
/**
 * A core this small is contracted anyway, whatever its degree: it costs nothing measurable, and each long query then
 * climbs a few more levels instead of running Dijkstra over every core edge. The turn graph of the 600-copy
 * country reaches the degree limit with 747 nodes left: contracted, its contraction takes no longer, a long query
 * settles 1,080 nodes instead of 1,722, and the search alternatives need 0.86 ms instead of 1.8.
 */
const SMALL_CORE = 4096;

export interface CHOptions {
  /**
   * Stop contracting when the remaining (core) graph's average out-degree exceeds this: the last, densest nodes
   * cost O(degree^3) each to contract, which on a million-node grid would take hours in JS. The core's edges stay
   * searchable in both directions (a "core-CH"), so queries remain exact; they just run plain Dijkstra inside the
   * core. Road networks reach the limit, if at all, in their last few hundred nodes, which are contracted anyway
   * (SMALL_CORE).
   */
  coreDegree?: number;
  /** A core of at most this many nodes is contracted whatever its degree (default SMALL_CORE). */
  smallCore?: number;
  /** Settle limit of each witness search (default 100). */
  witnessSettle?: number;
  progress?: (done: number, total: number, coreAvgDegree: number) => void;
}

export function buildCH(g: BaseGraph, opts: CHOptions = {}): CH {
  const n = g.n;
  // Everything contract() allocates besides the edges (adjacency pools, queues, search state) is garbage once it
  // returns, before finish() allocates the CSR.
  const { E, rank, contracted } = contract(g, opts);
  E.hops = new Uint32Array(0);
  // The core: every node not contracted, ranked above all others; edges among them go in both search graphs.
  let done = 0;
  for (let v = 0; v < n; v++) done += contracted[v]!;
  const coreNodes = n - done;
  const core = contracted; // reused in place: 1 = core
  for (let v = 0; v < n; v++)
    if (!contracted[v]) {
      core[v] = 1;
      rank[v] = done++;
    } else core[v] = 0;
  return { ...finish(n, rank, E, core), coreNodes };
}

/** Contracts nodes until none are left or the core limit is hit; rank holds the contraction order of contracted nodes. */
function contract(g: BaseGraph, opts: CHOptions): { E: Edges; rank: Uint32Array; contracted: Uint8Array } {
  const progress = opts.progress;
  const coreDegree = opts.coreDegree ?? 16,
    smallCore = opts.smallCore ?? SMALL_CORE;
  const settleLimit = opts.witnessSettle ?? WITNESS_SETTLE;
  const n = g.n;
  const m0 = g.first[n]!;
  const E = new Edges(Math.max(1024, 2 * m0));
  // Active adjacency (edges between not-yet-contracted nodes only), as edge ids; sized by base degrees.
  const deg = new Uint32Array(n);
  for (let u = 0; u < n; u++) deg[u] = g.first[u + 1]! - g.first[u]!;
  const out = new AdjPool(deg);
  deg.fill(0);
  for (let i = 0; i < m0; i++) deg[g.head[i]!]!++;
  const inn = new AdjPool(deg);
  let live = 0; // edges between uncontracted nodes
  const addOrImprove = (u: number, v: number, w: number, a: number, b: number, hops: number): boolean => {
    const p = out.pool,
      head = E.head;
    for (let i = out.start[u]!, end = i + out.len[u]!; i < end; i++) {
      const e = p[i]!;
      if (head[e] !== v) continue;
      if (E.w[e]! <= w) return false;
      E.w[e] = w;
      E.a[e] = a;
      E.b[e] = b;
      E.hops[e] = hops; // safe: an edge between live nodes is nobody's child yet
      return true;
    }
    const e = E.add(u, v, w, a, b, hops);
    out.push(u, e);
    inn.push(v, e);
    live++;
    return true;
  };
  for (let u = 0; u < n; u++) {
    for (let i = g.first[u]!; i < g.first[u + 1]!; i++)
      if (g.head[i] !== u) addOrImprove(u, g.head[i]!, g.ms[i]!, -1 - i, -1, 1);
  }
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
    const p = out.pool,
      os = out.start,
      ol = out.len,
      head = E.head,
      ew = E.w;
    while (pq.length) {
      const d = pq.peekValue()!;
      const u = pq.pop()!;
      if (d > dist[u]!) continue;
      if (d > maxW || ++settled > limit) break;
      if (isTarget[u] === run && --targetsLeft === 0) break;
      for (let i = os[u]!, end = i + ol[u]!; i < end; i++) {
        const e = p[i]!;
        const v = head[e]!;
        if (v === skip) continue;
        const nd = d + ew[e]!;
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
    const op = out.pool,
      ip = inn.pool;
    const os = out.start[v]!,
      oe = os + out.len[v]!,
      is = inn.start[v]!,
      ie = is + inn.len[v]!;
    let maxOut = 0,
      removedHops = 0,
      addedHops = 0;
    for (let k = os; k < oe; k++) {
      const e = op[k]!;
      maxOut = Math.max(maxOut, E.w[e]!);
      removedHops += E.hops[e]!;
    }
    for (let k = is; k < ie; k++) removedHops += E.hops[ip[k]!]!;
    for (let j = is; j < ie; j++) {
      const ei = ip[j]!;
      const u = E.tail[ei]!;
      const wi = E.w[ei]!;
      run++; // the witness search takes the next run id: mark its targets with it first
      targetsLeft = 0;
      for (let k = os; k < oe; k++) {
        const x = E.head[op[k]!]!;
        if (x !== u && isTarget[x] !== run) {
          isTarget[x] = run;
          targetsLeft++;
        }
      }
      run--;
      witness(u, v, wi + maxOut, settleLimit);
      for (let k = os; k < oe; k++) {
        const eo = op[k]!;
        const x = E.head[eo]!;
        if (x === u) continue;
        const w = wi + E.w[eo]!;
        if (stamp[x] === run && dist[x]! <= w) continue;
        shortcut.push(u, x, w, ei, eo);
        addedHops += E.hops[ei]! + E.hops[eo]!;
      }
    }
    const added = shortcut.length / 5;
    const removed = ie - is + (oe - os);
    return level[v]! + (removed ? (2 * added) / removed + (4 * addedHops) / removedHops : 0);
  };
  const priority = simulate;
  // Each node is in the queue at most once (a popped node is either contracted or pushed back), so n fits.
  const order = new FlatQueue<number>(Math.max(1, n));
  for (let v = 0; v < n; v++) order.push(v, priority(v));
  const rank = new Uint32Array(n);
  const contracted = new Uint8Array(n);
  let done = 0;
  while (order.length) {
    if (n - done > smallCore && live / (n - done) > coreDegree) break;
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
    live -= out.len[v]! + inn.len[v]!;
    // Detach v from the live graph (neighbours are re-evaluated lazily, when popped). Live edges are unique per
    // (tail, head), so v's out-edge v->x is the one entry of x's in-list with tail v, and likewise for in-edges.
    const lv = level[v]! + 1;
    for (let k = out.start[v]!, end = k + out.len[v]!; k < end; k++) {
      const e = out.pool[k]!,
        x = E.head[e]!;
      inn.remove(x, e);
      if (level[x]! < lv) level[x] = lv;
    }
    for (let k = inn.start[v]!, end = k + inn.len[v]!; k < end; k++) {
      const e = inn.pool[k]!,
        x = E.tail[e]!;
      out.remove(x, e);
      if (level[x]! < lv) level[x] = lv;
    }
    out.clear(v);
    inn.clear(v);
  }
  return { E, rank, contracted };
}

/** The searchable part of a hierarchy (what the graph file stores). */
export type CHArrays = Omit<CH, 'coreNodes'>;

/**
 * Splits the edges into the upward graph (by tail) and the reversed downward graph (by head), CSR each; core edges
 * go in both. Edges are renumbered grouped by the node whose list holds them (an up edge's tail, a down edge's
 * head; its up edges first, each group in creation order), so a search reads a node's edges as one run of every
 * edge array and a shortcut's children, made when one of its ends was contracted, sit near it. With the graph's
 * nodes numbered along the roads (import/roads/locality.ts), unpacking a long route then reads mostly neighbours.
 */
function finish(n: number, rank: Uint32Array, E: Edges, core: Uint8Array): CHArrays {
  const m = E.length;
  let tail = E.tail,
    head = E.head;
  const isCore = (e: number) => core[head[e]!] === 1 && core[tail[e]!] === 1;
  const isUp = (e: number) => isCore(e) || rank[head[e]!]! > rank[tail[e]!]!;
  const isDown = (e: number) => isCore(e) || rank[head[e]!]! < rank[tail[e]!]!;
  const upFirst = new Uint32Array(n + 1),
    dnFirst = new Uint32Array(n + 1);
  // down edges that are not also up edges, per node: they follow the node's up edges in the new numbering
  const dnOnly = new Uint32Array(n + 1);
  for (let e = 0; e < m; e++) {
    const up = isUp(e);
    if (up) upFirst[tail[e]! + 1]!++;
    if (isDown(e)) {
      dnFirst[head[e]! + 1]!++;
      if (!up) dnOnly[head[e]! + 1]!++;
    }
  }
  for (let u = 0; u < n; u++) {
    upFirst[u + 1]! += upFirst[u]!;
    dnFirst[u + 1]! += dnFirst[u]!;
    dnOnly[u + 1]! += dnOnly[u]!;
  }
  // new id: node u's up edges start at upFirst[u] + dnOnly[u], its other down edges right after them
  const newId = new Uint32Array(m);
  const upEdge = new Uint32Array(upFirst[n]!),
    dnEdge = new Uint32Array(dnFirst[n]!);
  const uf = upFirst.slice(0, n),
    df = dnFirst.slice(0, n),
    of = new Uint32Array(n);
  for (let u = 0; u < n; u++) of[u] = upFirst[u + 1]! + dnOnly[u]!;
  for (let e = 0; e < m; e++) {
    if (isUp(e)) {
      const t = tail[e]!;
      newId[e] = uf[t]! + dnOnly[t]!;
      upEdge[uf[t]!++] = newId[e]!;
    } else newId[e] = of[head[e]!]!++;
  }
  for (let e = 0; e < m; e++) if (isDown(e)) dnEdge[df[head[e]!]!++] = newId[e]!;
  // Each output array is written in the new order, dropping its growable source before the next is made.
  const moved = <T extends Uint32Array | Int32Array>(src: T, out: T, children = false): T => {
    for (let e = 0; e < m; e++) {
      const x = src[e]!;
      out[newId[e]!] = children && x >= 0 ? newId[x]! : x;
    }
    return out;
  };
  const chW = moved(E.w, new Uint32Array(m));
  E.w = new Uint32Array(0);
  const chA = moved(E.a, new Int32Array(m), true);
  E.a = new Int32Array(0);
  const chB = moved(E.b, new Int32Array(m), true);
  E.b = new Int32Array(0);
  const chTail = moved(tail, new Uint32Array(m));
  E.tail = tail = new Uint32Array(0);
  const chHead = moved(head, new Uint32Array(m));
  E.head = head = new Uint32Array(0);
  return {
    rank,
    chTail,
    chHead,
    chW,
    chA,
    chB,
    ...searchAdjacency(chHead, chTail, chW, upFirst, upEdge, dnFirst, dnEdge),
  };
}
