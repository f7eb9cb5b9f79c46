/**
 * One search direction's per-node state (distance, parent edge) for the nodes a query touched, in the layout
 * OSRM calls array storage: a node -> slot index over the whole graph (4 bytes per node) and small dense slot
 * arrays that grow with the search space. A slot is valid when it is below `used` and names the node back, so
 * a new query starts by setting `used = 0`: nothing is cleared, and a country graph costs each routing thread
 * 4 bytes per node per direction instead of the 20 of full-size distance, parent and stamp arrays.
 */
export class SearchSpace {
  private readonly index: Uint32Array;
  private nodes = new Uint32Array(1024);
  private dists = new Float64Array(1024);
  private pars = new Int32Array(1024);
  private used = 0;

  constructor(n: number) {
    this.index = new Uint32Array(n);
  }

  reset(): void {
    this.used = 0;
  }

  /** v's slot, or -1 when this query has not reached v. */
  slot(v: number): number {
    const i = this.index[v]!;
    return i < this.used && this.nodes[i] === v ? i : -1;
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
      this.index[v] = i;
      this.nodes[i] = v;
    }
    this.dists[i] = d;
    this.pars[i] = par;
    return true;
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
