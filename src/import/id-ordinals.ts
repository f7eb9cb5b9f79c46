import { indexOfSorted } from '../core/sorted.js';

/**
 * OSM id -> ordinal for ids appended in order (e.g. the ways an importer kept, numbered 0, 1, 2...), without a JS
 * Map: one Float64Array of ids, binary-searched; ids that arrive out of order are sorted once (with their ordinals)
 * on the first lookup. 8 bytes an id (12 when the input was unsorted).
 */
export class IdOrdinals {
  private ids = new Float64Array(1024);
  private n = 0;
  private sorted = true;
  private sortedIds: Float64Array | undefined;
  private ordinals: Uint32Array | undefined;

  static from(ids: ArrayLike<number>): IdOrdinals {
    const x = new IdOrdinals();
    for (let i = 0; i < ids.length; i++) x.push(ids[i]!);
    return x;
  }

  get size(): number {
    return this.n;
  }

  /** Appends `id` as ordinal `size`. */
  push(id: number): void {
    if (this.n === this.ids.length) {
      const b = new Float64Array(this.ids.length * 2);
      b.set(this.ids);
      this.ids = b;
    }
    if (this.n && id < this.ids[this.n - 1]!) this.sorted = false;
    this.ids[this.n++] = id;
    this.sortedIds = this.ordinals = undefined;
  }

  /** The ordinal of `id`, or undefined. */
  get(id: number): number | undefined {
    let ids: Float64Array = this.ids;
    let ord: Uint32Array | undefined;
    if (!this.sorted) {
      if (!this.sortedIds) {
        const order = new Uint32Array(this.n);
        for (let i = 0; i < this.n; i++) order[i] = i;
        const raw = this.ids;
        order.sort((a, b) => raw[a]! - raw[b]!);
        this.ordinals = order;
        this.sortedIds = Float64Array.from(order, (i) => raw[i]!);
      }
      ids = this.sortedIds;
      ord = this.ordinals;
    }
    const at = indexOfSorted(ids.subarray(0, this.n), id);
    return at < 0 ? undefined : ord ? ord[at] : at;
  }
}
