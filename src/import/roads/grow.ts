/** Append-only typed arrays that double when full: compact storage for millions of numbers without JS arrays. */
type TypedCtor<T> = { new (n: number): T };

function growable<T extends Float64Array | Uint32Array | Uint8Array | Int32Array>(Ctor: TypedCtor<T>) {
  return class {
    private a: T = new Ctor(1024);
    length = 0;
    push(v: number): void {
      if (this.length === this.a.length) {
        const b = new Ctor(this.a.length * 2);
        b.set(this.a);
        this.a = b;
      }
      this.a[this.length++] = v;
    }
    /** A view of the filled part (shares memory until the next growth). */
    view(): T {
      return this.a.subarray(0, this.length) as T;
    }
  };
}

export const GrowF64 = growable(Float64Array);
export const GrowU32 = growable(Uint32Array);
export const GrowI32 = growable(Int32Array);
export const GrowU8 = growable(Uint8Array);
