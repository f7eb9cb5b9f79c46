import { lowerBound } from '../../core/sorted.js';

/** A way's geometry as the importer keeps it: projected coordinates plus the node ids at its two ends. */
export interface WayLine {
  first: number;
  last: number;
  coords: Float64Array;
}

export interface Chain extends WayLine {
  closed: boolean;
}

function concat(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length - 2); // shared end node once
  out.set(a);
  out.set(b.subarray(2), a.length);
  return out;
}

function reversed(w: WayLine): WayLine {
  const c = new Float64Array(w.coords.length);
  for (let i = 0; i < c.length; i += 2) {
    c[i] = w.coords[w.coords.length - 2 - i]!;
    c[i + 1] = w.coords[w.coords.length - 1 - i]!;
  }
  return { first: w.last, last: w.first, coords: c };
}

/**
 * Joins ways that share end nodes into chains (multipolygon rings, coastlines). `keepDirection` is for coastlines,
 * whose direction carries meaning (land on the left); multipolygon members may be joined either way round.
 */
export function joinWays(ways: WayLine[], keepDirection: boolean): Chain[] {
  const used = new Uint8Array(ways.length);
  // Way ends sorted by node id (entry e is way e >> 1's first end when e is even, its last when odd), searched by
  // bisection: no Map keyed by node id, and a node shared by many ways costs nothing extra.
  const endOf = (e: number) => (e & 1 ? ways[e >>> 1]!.last : ways[e >>> 1]!.first);
  const order = new Uint32Array(2 * ways.length);
  for (let e = 0; e < order.length; e++) order[e] = e;
  order.sort((a, b) => endOf(a) - endOf(b) || a - b);
  const ends = Float64Array.from(order, endOf);
  const take = (id: number, wantFirst: boolean): WayLine | undefined => {
    for (let k = lowerBound(ends, id); k < ends.length && ends[k] === id; k++) {
      const i = order[k]! >>> 1;
      if (used[i]) continue;
      const w = ways[i]!;
      if ((wantFirst ? w.first : w.last) === id) return ((used[i] = 1), w);
      if (!keepDirection && (wantFirst ? w.last : w.first) === id) return ((used[i] = 1), reversed(w));
    }
    return undefined;
  };
  const chains: Chain[] = [];
  for (let i = 0; i < ways.length; i++) {
    if (used[i]) continue;
    used[i] = 1;
    let cur: WayLine = ways[i]!;
    for (let next; cur.first !== cur.last && (next = take(cur.last, true));)
      cur = { first: cur.first, last: next.last, coords: concat(cur.coords, next.coords) };
    for (let prev; cur.first !== cur.last && (prev = take(cur.first, false));)
      cur = { first: prev.first, last: cur.last, coords: concat(prev.coords, cur.coords) };
    chains.push({ ...cur, closed: cur.first === cur.last && cur.coords.length >= 8 });
  }
  return chains;
}
