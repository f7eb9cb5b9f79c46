/** The contraction's working storage (see the memory notes in ch-build.ts): edges and per-node adjacency lists. */

/** All edges ever created (base edges, then shortcuts), in growable typed arrays indexed by edge id. */
export class Edges {
  tail: Uint32Array;
  head: Uint32Array;
  w: Uint32Array;
  a: Int32Array;
  b: Int32Array;
  /**
   * Original edges an edge stands for. Uint32 cannot saturate: a shortcut's hops are at most its weight when
   * every base weight is >= 1 ms (build-graph clamps to 1), and the weight itself must fit chW's Uint32.
   */
  hops: Uint32Array;
  length = 0;
  constructor(capacity: number) {
    this.tail = new Uint32Array(capacity);
    this.head = new Uint32Array(capacity);
    this.w = new Uint32Array(capacity);
    this.a = new Int32Array(capacity);
    this.b = new Int32Array(capacity);
    this.hops = new Uint32Array(capacity);
  }
  add(t: number, h: number, w: number, a: number, b: number, hops: number): number {
    if (this.length === this.tail.length) this.grow();
    const e = this.length++;
    this.tail[e] = t;
    this.head[e] = h;
    this.w[e] = w;
    this.a[e] = a;
    this.b[e] = b;
    this.hops[e] = hops;
    return e;
  }
  /** Doubles the capacity, one array at a time (the transient overhead is one old array, not all six). */
  private grow(): void {
    const cap = Math.max(1024, this.tail.length * 2);
    const g = <T extends Uint32Array | Int32Array>(x: T, y: T): T => (y.set(x), y);
    this.tail = g(this.tail, new Uint32Array(cap));
    this.head = g(this.head, new Uint32Array(cap));
    this.w = g(this.w, new Uint32Array(cap));
    this.a = g(this.a, new Int32Array(cap));
    this.b = g(this.b, new Int32Array(cap));
    this.hops = g(this.hops, new Uint32Array(cap));
  }
}

/**
 * Per-node lists of edge ids in one shared pool: node u's list is pool[start[u] .. start[u]+len[u]), with room
 * up to cap[u]. A full list moves to the end of the pool with twice the room; when the pool itself is full it is
 * rebuilt compactly (dead slots of moved lists and of contracted nodes dropped) at twice the live room.
 * Removal shifts the rest of the slice left, so lists keep insertion order (witness searches scan them in the
 * same order as before, which keeps the hierarchy identical tie for tie).
 */
export class AdjPool {
  start: Uint32Array;
  len: Uint32Array;
  cap: Uint32Array;
  pool: Uint32Array;
  end = 0;
  /** Sum of cap[] over all nodes (the slots a compaction keeps). */
  private liveCap = 0;
  constructor(deg: Uint32Array) {
    const n = deg.length;
    this.start = new Uint32Array(n);
    this.len = new Uint32Array(n);
    this.cap = new Uint32Array(n);
    for (let u = 0; u < n; u++) {
      const c = deg[u]! ? deg[u]! + 2 : 0; // road nodes gain a few shortcuts: avoid moving most lists at all
      this.start[u] = this.end;
      this.cap[u] = c;
      this.end += c;
    }
    this.liveCap = this.end;
    this.pool = new Uint32Array(Math.max(1024, Math.ceil(this.end * 1.25)));
  }
  push(u: number, e: number): void {
    const l = this.len[u]!;
    if (l === this.cap[u]) {
      const c = Math.max(4, l * 2);
      if (this.end + c > this.pool.length) this.rebuild(c);
      this.pool.copyWithin(this.end, this.start[u]!, this.start[u]! + l);
      this.start[u] = this.end;
      this.end += c;
      this.liveCap += c - l;
      this.cap[u] = c;
    }
    this.pool[this.start[u]! + l] = e;
    this.len[u] = l + 1;
  }
  /** Removes edge id e from u's list (it must be there), keeping the order of the others. */
  remove(u: number, e: number): void {
    const s = this.start[u]!,
      l = this.len[u]!,
      p = this.pool;
    let i = s;
    while (p[i] !== e) i++;
    p.copyWithin(i, i + 1, s + l);
    this.len[u] = l - 1;
  }
  /** Empties u's list and gives its room back (u was contracted). */
  clear(u: number): void {
    this.liveCap -= this.cap[u]!;
    this.len[u] = 0;
    this.cap[u] = 0;
  }
  /** New pool with every list packed in node order, twice the live room (plus `extra`) long. */
  private rebuild(extra: number): void {
    const next = new Uint32Array(Math.max(1024, 2 * (this.liveCap + extra)));
    const n = this.start.length;
    let at = 0;
    for (let u = 0; u < n; u++) {
      const c = this.cap[u]!;
      if (!c) continue;
      next.set(this.pool.subarray(this.start[u], this.start[u]! + this.len[u]!), at);
      this.start[u] = at;
      at += c;
    }
    this.pool = next;
    this.end = at;
  }
}
