/**
 * One search direction's per-node state (distance, parent edge) for the nodes a query touched: small dense slot
 * arrays that grow with the search space, and a node -> slot hash table (open addressing, linear probing) sized for
 * the search space rather than the graph. An entry is valid when it carries the current query's generation, so a new
 * query starts by bumping the generation: nothing is cleared.
 *
 * A contraction-hierarchy query touches a few hundred to a few thousand nodes of a country graph. The table stays in
 * the CPU's cache where a 4-byte-per-node index over the whole graph (27 MB per direction at 600 copies, four per
 * routing thread) missed it on nearly every lookup, and had its pages faulted in one by one by the first few hundred
 * routes: +217 MB of server memory after start, and slow first answers.
 */
export class SearchSpace {
  private nodes = new Uint32Array(1024);
  private dists = new Float64Array(1024);
  private pars = new Int32Array(1024);
  private used = 0;
  /** Hash table: node, its slot, and the generation that wrote the entry. */
  private keys = new Uint32Array(4096);
  private vals = new Uint32Array(4096);
  private gens = new Uint32Array(4096);
  private gen = 1;
  private shift = 32 - 12;

  reset(): void {
    this.used = 0;
    if (++this.gen === 0xffffffff) {
      this.gens.fill(0);
      this.gen = 1;
    }
  }

  /** v's slot, or -1 when this query has not reached v. */
  slot(v: number): number {
    const { keys, gens, gen } = this,
      mask = keys.length - 1;
    for (let i = Math.imul(v + 1, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      if (gens[i] !== gen) return -1;
      if (keys[i] === v) return this.vals[i]!;
    }
  }

  has(v: number): boolean {
    return this.slot(v) >= 0;
  }

  /** Distance of a reached node (Infinity when not reached). */
  dist(v: number): number {
    const i = this.slot(v);
    return i < 0 ? Infinity : this.dists[i]!;
  }

  /** CH edge v was reached by (-1 at a seed or when not reached). */
  par(v: number): number {
    const i = this.slot(v);
    return i < 0 ? -1 : this.pars[i]!;
  }

  /** Sets v's distance and parent when v is new or `d` improves on it; answers whether it did. */
  relax(v: number, d: number, par: number): boolean {
    let i = this.slot(v);
    if (i >= 0) {
      if (d >= this.dists[i]!) return false;
    } else {
      if (this.used === this.nodes.length) this.grow();
      i = this.used++;
      this.nodes[i] = v;
      // at most half full, so probes stay short
      if (2 * this.used > this.keys.length) this.rehash(2 * this.keys.length);
      else this.insert(v, i);
    }
    this.dists[i] = d;
    this.pars[i] = par;
    return true;
  }

  private insert(v: number, slot: number): void {
    const { keys, gens, gen } = this,
      mask = keys.length - 1;
    let i = Math.imul(v + 1, 0x9e3779b1) >>> this.shift;
    while (gens[i] === gen) i = (i + 1) & mask;
    keys[i] = v;
    this.vals[i] = slot;
    gens[i] = gen;
  }

  /** A table of `size` entries (a power of two) holding every slot in use. */
  private rehash(size: number): void {
    this.keys = new Uint32Array(size);
    this.vals = new Uint32Array(size);
    this.gens = new Uint32Array(size);
    this.gen = 1;
    this.shift = 32 - Math.log2(size);
    for (let s = 0; s < this.used; s++) this.insert(this.nodes[s]!, s);
  }

  private grow(): void {
    const cap = this.nodes.length * 2;
    const nodes = new Uint32Array(cap),
      dists = new Float64Array(cap),
      pars = new Int32Array(cap);
    nodes.set(this.nodes);
    dists.set(this.dists);
    pars.set(this.pars);
    this.nodes = nodes;
    this.dists = dists;
    this.pars = pars;
  }
}
