import FlatQueue from 'flatqueue';
import type { CHArrays } from '../build/ch-build.js';
import { SearchSpace } from './search-space.js';
import { ShortcutUnpacker } from './ch-unpack.js';

/** Settled nodes between two interrupt checks: a few microseconds of search. */
const CHECK_EVERY = 512;

/** A search endpoint: a graph node and the cost (ms) already spent reaching it (source) or still to go (target). */
export type Seed = [node: number, offset: number];

/**
 * Bidirectional CH query: a forward Dijkstra from the sources over upward edges and a backward one from the
 * targets over (reversed) downward edges; they meet at the highest node of the shortest path. Per-node state
 * lives in two SearchSpaces (slots and a hash table for the nodes a query touches, see search-space.ts), so a query
 * touches only its (small) search spaces and holds nothing per graph node.
 * Not re-entrant: one instance per concurrent caller (queries are synchronous, so one per engine thread suffices).
 */
export class CHQuery {
  readonly fwd: SearchSpace;
  readonly bwd: SearchSpace;
  private readonly qF = new FlatQueue<number>();
  private readonly qB = new FlatQueue<number>();
  /** Nodes settled by both searches in the last `full` query (via-node candidates for alternatives). */
  readonly meetNodes: number[] = [];

  /**
   * Called every CHECK_EVERY settled nodes while a query runs; it throws to abandon the query (a pool thread's
   * cancel word, see limits/worker-host.ts). Unset, queries run to the end.
   */
  interrupt?: () => void;
  private steps = 0;
  /** Nodes the last run() took from its queues (both directions, both phases): its search space. */
  lastSettled = 0;

  /** Ranks at or above this belong to the uncontracted core (see CHOptions.coreDegree). */
  private readonly coreStart: number;
  private readonly coreList: Uint32Array;

  /**
   * `stall`: stall-on-demand (see stalled()). It pays on a long search (a long query settles 648 nodes instead of
   * 1,080 at 600 copies); a T-test's short one settles a few dozen more without it and runs 20% faster.
   */
  constructor(
    private readonly ch: CHArrays,
    coreNodes = 0,
    private readonly stall = true,
  ) {
    const n = ch.rank.length;
    this.coreStart = n - coreNodes;
    this.coreList = new Uint32Array(coreNodes);
    if (coreNodes > 0) for (let v = 0, k = 0; v < n; v++) if (ch.rank[v]! >= this.coreStart) this.coreList[k++] = v;
    this.fwd = new SearchSpace();
    this.bwd = new SearchSpace();
    this.unpacker = new ShortcutUnpacker(ch);
  }

  /** Forward distance of v in the last query (Infinity when the forward search did not reach it). */
  distF = (v: number) => this.fwd.dist(v);
  distB = (v: number) => this.bwd.dist(v);
  /** CH edge v was reached by in each tree (-1 at a seed or when not reached). */
  parF = (v: number) => this.fwd.par(v);
  parB = (v: number) => this.bwd.par(v);

  /**
   * Returns the best meeting node and cost, or undefined when the targets are unreachable. With `viaStretch` > 0
   * the searches go on past the shortest path for alternatives, and `meetNodes` lists every node both reached at
   * a cost up to `viaStretch` x the best (a via node costs at least its key in either search, so a search stops
   * once its smallest key passes that bound: on a country graph running to exhaustion settled twice the nodes);
   * Infinity runs them to exhaustion. With `below` (a plain query), whether there is a path cheaper than that:
   * the first one the searches meet on is answered (not necessarily the shortest), undefined when there is none.
   */
  run(sources: Seed[], targets: Seed[], viaStretch = 0, below = Infinity): { meet: number; cost: number } | undefined {
    const full = viaStretch > 0;
    const { fwd: F, bwd: B, qF, qB, ch } = this;
    const { chFirst: first, chAdj: adj } = ch;
    const steps0 = this.steps;
    F.reset();
    B.reset();
    qF.clear();
    qB.clear();
    this.meetNodes.length = 0;
    this.unpacker.forget();
    for (const [v, o] of sources) if (F.relax(v, o, -1)) qF.push(v, o);
    for (const [v, o] of targets) if (B.relax(v, o, -1)) qB.push(v, o);
    let best = below,
      meet = -1;
    // A node both searches reached, at cost c through it: the best meeting so far when cheaper, and (full) a via node.
    const met = (v: number, c: number, settled: boolean) => {
      if (c < best) {
        best = c;
        meet = v;
      }
      if (settled && full) this.meetNodes.push(v);
    };
    for (const [v] of sources) if (B.has(v)) met(v, F.dist(v) + B.dist(v), false);
    const any = below < Infinity;
    // without a core (a road network contracts whole) no node's rank is read: a cache miss per settled node
    const core = this.coreStart < ch.rank.length;
    let fwd = true;
    while ((qF.length || qB.length) && !(any && meet >= 0)) {
      const bound = full ? viaStretch * best : best;
      const fDone = !qF.length || (full ? qF.peekValue()! > bound : qF.peekValue()! >= bound);
      const bDone = !qB.length || (full ? qB.peekValue()! > bound : qB.peekValue()! >= bound);
      if (fDone && bDone) break;
      fwd = fDone ? false : bDone ? true : !fwd;
      if (fwd) {
        const d = qF.peekValue()!,
          u = qF.pop()!;
        if (d > F.dist(u)) continue;
        if (++this.steps % CHECK_EVERY === 0) this.interrupt?.();
        // d is F.dist(u) here: one probe of the other search's table says whether they meet, and for how much
        const c = d + B.dist(u);
        if (c < Infinity) met(u, c, true);
        if (core && ch.rank[u]! >= this.coreStart) continue; // core entry: expanded in phase 2
        const at = first[u]!;
        if (this.stall && this.stalled(at + 3 * adj[at]! + 1, first[u + 1]!, d, F)) continue;
        for (let i = at + 1, end = at + 1 + 3 * adj[at]!; i < end; i += 3) {
          const v = adj[i]!,
            nd = d + adj[i + 1]!;
          if (F.relax(v, nd, adj[i + 2]!)) qF.push(v, nd);
        }
      } else {
        const d = qB.peekValue()!,
          u = qB.pop()!;
        if (d > B.dist(u)) continue;
        if (++this.steps % CHECK_EVERY === 0) this.interrupt?.();
        const c = d + F.dist(u);
        if (c < Infinity) met(u, c, true);
        if (core && ch.rank[u]! >= this.coreStart) continue;
        const at = first[u]!,
          down = at + 3 * adj[at]! + 1;
        if (this.stall && this.stalled(at + 1, down, d, B)) continue;
        for (let i = down, end = first[u + 1]!; i < end; i += 3) {
          const v = adj[i]!,
            nd = d + adj[i + 1]!;
          if (B.relax(v, nd, adj[i + 2]!)) qB.push(v, nd);
        }
      }
    }
    if (core) {
      const r = this.coreSearch(best, meet, viaStretch);
      best = r.best;
      meet = r.meet;
    }
    this.lastSettled = this.steps - steps0;
    return meet < 0 ? undefined : { meet, cost: best };
  }

  /**
   * Phase 2 with a core: plain bidirectional Dijkstra inside the core (a flat graph, so the stronger stopping
   * rule topF + topB >= best is valid there), seeded with every core node the upward searches reached. With
   * `viaStretch` each search goes on while its smallest key is within viaStretch x the best, and every core node
   * both reach is a meet node: on a country graph the via nodes of most alternatives are there.
   */
  private coreSearch(best: number, meet: number, viaStretch: number): { best: number; meet: number } {
    const { fwd: F, bwd: B, qF, qB } = this;
    const { chFirst: first, chAdj: adj } = this.ch;
    const full = viaStretch > 0;
    qF.clear();
    qB.clear();
    for (const v of this.coreList) {
      if (F.has(v)) qF.push(v, F.dist(v));
      if (B.has(v)) qB.push(v, B.dist(v));
    }
    const open = (q: typeof qF) => q.length > 0 && q.peekValue()! <= viaStretch * best;
    const more = () =>
      full ? open(qF) || open(qB) : qF.length > 0 && qB.length > 0 && qF.peekValue()! + qB.peekValue()! < best;
    while (more()) {
      if (++this.steps % CHECK_EVERY === 0) this.interrupt?.();
      if (full ? open(qF) && (!open(qB) || qF.length <= qB.length) : qF.length <= qB.length) {
        const d = qF.peekValue()!,
          u = qF.pop()!;
        if (d > F.dist(u)) continue;
        const at = first[u]!;
        for (let i = at + 1, end = at + 1 + 3 * adj[at]!; i < end; i += 3) {
          const v = adj[i]!,
            nd = d + adj[i + 1]!;
          if (F.relax(v, nd, adj[i + 2]!)) qF.push(v, nd);
          const db = B.dist(v);
          if (nd + db < best) {
            best = nd + db;
            meet = v;
          }
        }
      } else {
        const d = qB.peekValue()!,
          u = qB.pop()!;
        if (d > B.dist(u)) continue;
        const at = first[u]!;
        for (let i = at + 1 + 3 * adj[at]!, end = first[u + 1]!; i < end; i += 3) {
          const v = adj[i]!,
            nd = d + adj[i + 1]!;
          if (B.relax(v, nd, adj[i + 2]!)) qB.push(v, nd);
          const df = F.dist(v);
          if (nd + df < best) {
            best = nd + df;
            meet = v;
          }
        }
      }
    }
    if (full) for (const v of this.coreList) if (F.has(v) && B.has(v)) this.meetNodes.push(v);
    return { best, meet };
  }

  /**
   * Stall-on-demand: u, settled at d by search S, is not expanded when a node above it that S has reached leads to
   * it for less (u's distance is then not the shortest, and no shortest path climbs on from it). For the forward
   * search those are the tails of u's down edges; for the backward one, the heads of its up edges: the triples
   * chAdj[from..to) of u's block.
   */
  private stalled(from: number, to: number, d: number, S: SearchSpace): boolean {
    const adj = this.ch.chAdj;
    for (let i = from; i < to; i += 3) if (S.dist(adj[i]!) + adj[i + 1]! < d) return true;
    return false;
  }

  /** Tail and head of CH edge e. */
  tail(e: number): number {
    return this.ch.chTail[e]!;
  }
  head(e: number): number {
    return this.ch.chHead[e]!;
  }

  // The walks down the search trees look each node up once (a hash-table probe in SearchSpace): a long route's
  // alternatives walk the trees of ~65 via nodes, and looking each node up three times was most of that.

  /** The source seed the forward search tree leads back to from v. */
  seedF(v: number): number {
    return this.walk(v, false);
  }

  /** The target seed the backward search tree leads to from v. */
  seedB(v: number): number {
    return this.walk(v, true);
  }

  /**
   * The CH edges of the path source -> v -> target through the last run's search trees, in driving order (in `out`,
   * emptied first, when given); with `seeds`, the seeds it starts and ends at (seedF(v), seedB(v)) go into seeds[0]
   * and seeds[1].
   */
  packed(v: number, seeds?: number[], out: number[] = []): number[] {
    out.length = 0;
    const s = this.walk(v, false, out);
    out.reverse();
    const t = this.walk(v, true, out);
    if (seeds) {
      seeds[0] = s;
      seeds[1] = t;
    }
    return out;
  }

  /** The seed v's tree (the backward one with `back`) leads to; the tree edges on the way are appended to `out`. */
  private walk(v: number, back: boolean, out?: number[]): number {
    const S = back ? this.bwd : this.fwd,
      end = back ? this.ch.chHead : this.ch.chTail;
    for (let e = S.par(v); e >= 0; e = S.par(v)) {
      out?.push(e);
      v = end[e]!;
    }
    return v;
  }

  /**
   * Travel time two packed paths (CH edges in driving order) share at their start plus at their end, exactly:
   * equal edges are consumed whole, and where they differ only the larger of the two is unpacked, one level at a
   * time, until two different road edges show where the routes part. Costs the depth of the shortcuts at the two
   * partings, not the length of the paths.
   */
  sharedEnds(p: number[], r: number[]): number {
    return this.commonRun(p, r, false) + this.commonRun(p, r, true);
  }

  /** The two stacks of commonRun (a candidate's shared ends are measured hundreds of times a query: no garbage). */
  private stackA = new Int32Array(256);
  private stackB = new Int32Array(256);

  /**
   * Shared travel time of two packed paths from their first edges on, or (`fromEnd`) from their last edges back:
   * each path is a stack of CH edges whose top is the edge to compare next.
   */
  private commonRun(p: number[], r: number[], fromEnd: boolean): number {
    const { chA, chB, chW } = this.ch;
    const room = Math.max(p.length, r.length) + 64;
    if (this.stackA.length < room) {
      this.stackA = new Int32Array(2 * room);
      this.stackB = new Int32Array(2 * room);
    }
    let a = this.stackA,
      b = this.stackB;
    let na = p.length,
      nb = r.length;
    for (let i = 0; i < na; i++) a[i] = p[fromEnd ? i : na - 1 - i]!;
    for (let i = 0; i < nb; i++) b[i] = r[fromEnd ? i : nb - 1 - i]!;
    let shared = 0;
    while (na && nb) {
      const x = a[na - 1]!,
        y = b[nb - 1]!;
      if (x === y) {
        shared += chW[x]!;
        na--;
        nb--;
        continue;
      }
      const xs = chA[x]! >= 0,
        ys = chA[y]! >= 0;
      if (!xs && !ys) break; // two different road edges: the routes part here
      // unpack the longer (a road edge never is: it cannot be split), keeping driving order on the stack
      const onA = xs && (!ys || chW[x]! >= chW[y]!);
      // a stack grows by one part each time a shortcut on it is opened
      if ((onA ? na : nb) + 1 > a.length) {
        this.stackA = new Int32Array(2 * a.length);
        this.stackB = new Int32Array(2 * a.length);
        this.stackA.set(a);
        this.stackB.set(b);
        a = this.stackA;
        b = this.stackB;
      }
      const s = onA ? a : b,
        top = (onA ? na : nb) - 1,
        e = s[top]!;
      s[top] = fromEnd ? chA[e]! : chB[e]!;
      s[top + 1] = fromEnd ? chB[e]! : chA[e]!;
      if (onA) na++;
      else nb++;
    }
    return shared;
  }

  /**
   * Graph edge ids (original edges) of the path source -> meet -> target found by the last run (see
   * ShortcutUnpacker.roads: breadth first, reusing the roads of CH edges already unpacked since the last run); its
   * seeds go into `seeds` as packed() puts them.
   */
  unpack(meet: number, seeds?: number[]): Uint32Array {
    return this.unpacker.roads(this.packed(meet, seeds, this.packedScratch));
  }

  private readonly packedScratch: number[] = [];
  private readonly unpacker: ShortcutUnpacker;

  /**
   * The last node of CH edge e's road (tail at position `base`) at or before position `base + off`, and its
   * position: descends into the one child holding it at each level, so it costs the shortcut's depth, not its
   * length.
   */
  lastWithin(e: number, off: number, base: number): [node: number, pos: number] {
    const { chA, chB, chW, chHead, chTail } = this.ch;
    const end = base + off;
    for (;;) {
      const a = chA[e]!;
      if (a < 0) return base + chW[e]! <= end ? [chHead[e]!, base + chW[e]!] : [chTail[e]!, base];
      if (base + chW[a]! <= end) {
        base += chW[a]!;
        e = chB[e]!;
      } else e = a;
    }
  }

  /** The first node of CH edge e's road (tail at position `base`) at or after position `base + off`. */
  firstFrom(e: number, off: number, base: number): [node: number, pos: number] {
    const { chA, chB, chW, chHead, chTail } = this.ch;
    const end = base + off;
    for (;;) {
      const a = chA[e]!;
      if (a < 0) return base >= end ? [chTail[e]!, base] : [chHead[e]!, base + chW[e]!];
      if (end <= base + chW[a]!) e = a;
      else {
        base += chW[a]!;
        e = chB[e]!;
      }
    }
  }

  /** Appends the original edges of CH edge e, in order, without recursion (shortcut nesting can be deep). */
  expand(e: number, out: number[]): void {
    const stack = [e];
    while (stack.length) {
      const x = stack.pop()!;
      const a = this.ch.chA[x]!;
      if (a < 0) out.push(-1 - a);
      else stack.push(this.ch.chB[x]!, a);
    }
  }
}
