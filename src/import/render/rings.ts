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
  const byEnd = new Map<number, number[]>();
  const index = (id: number, i: number) => byEnd.set(id, [...(byEnd.get(id) ?? []), i]);
  ways.forEach((w, i) => {
    index(w.first, i);
    index(w.last, i);
  });
  const take = (id: number, wantFirst: boolean): WayLine | undefined => {
    for (const i of byEnd.get(id) ?? []) {
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
