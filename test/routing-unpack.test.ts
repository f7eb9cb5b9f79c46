import { describe, expect, it } from 'vitest';
import { buildCH } from '../src/routing/ch-build.js';
import { CHQuery } from '../src/routing/ch-query.js';
import { lineJson, type RoutePath } from '../src/routing/path.js';

/** A random W x W grid with some one-ways, as CSR arrays. */
function randomGrid(W: number, seed: number) {
  const n = W * W;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const adj: Array<Array<[number, number]>> = Array.from({ length: n }, () => []);
  for (let r = 0; r < W; r++)
    for (let c = 0; c < W; c++) {
      const u = r * W + c;
      for (const v of [c + 1 < W ? u + 1 : -1, r + 1 < W ? u + W : -1]) {
        if (v < 0) continue;
        const w = 1 + Math.floor(rnd() * 100),
          dir = rnd();
        if (dir > 0.15) adj[u]!.push([v, w]);
        if (dir < 0.85) adj[v]!.push([u, w]);
      }
    }
  const first = new Uint32Array(n + 1),
    head: number[] = [],
    ms: number[] = [];
  for (let u = 0; u < n; u++) {
    for (const [v, w] of adj[u]!) {
      head.push(v);
      ms.push(w);
    }
    first[u + 1] = head.length;
  }
  return { g: { n, first, head: Uint32Array.from(head), ms: Uint32Array.from(ms) }, rnd };
}

describe('CH unpacking', () => {
  it('unpacks every via path of a run like a plain descent, also when it copies the roads of CH edges met before', () => {
    const { g, rnd } = randomGrid(40, 11);
    for (const ch of [buildCH(g), buildCH(g, { coreDegree: 5 })]) {
      const q = new CHQuery(ch, ch.coreNodes);
      let copied = 0;
      for (let i = 0; i < 40; i++) {
        const s = Math.floor(rnd() * g.n),
          t = Math.floor(rnd() * g.n);
        if (!q.run([[s, 0]], [[t, 0]], true)) continue;
        const seenEdges = new Set<number>();
        // several via nodes of one run: their paths share CH edges near the seeds
        for (const v of q.meetNodes.slice(0, 8)) {
          const packed = q.packed(v);
          const want: number[] = [];
          for (const e of packed) q.expand(e, want);
          expect(Array.from(q.unpack(v))).toEqual(want);
          for (const e of packed) if (seenEdges.has(e)) copied++;
          for (const e of packed) seenEdges.add(e);
          // a road is connected: each edge starts where the one before ended
          for (let k = 1; k < want.length; k++) {
            const tail = g.first.findLastIndex((f) => f <= want[k]!);
            expect(tail).toBe(g.head[want[k - 1]!]);
          }
        }
      }
      expect(copied).toBeGreaterThan(0);
    }
  });
});

describe('route line text', () => {
  const path = (coords: number[]): RoutePath => ({
    n: coords.length / 2 - 1,
    way: new Uint32Array(0),
    node: new Int32Array(0),
    dist: new Float64Array(0),
    time: new Float64Array(0),
    pts: Float64Array.from(coords),
    edges: new Uint32Array(0),
    distM: 0,
    ms: 0,
  });
  const reference = (coords: number[]) => {
    const pts: string[] = [];
    let last = '';
    for (let i = 0; i < coords.length; i += 2) {
      const p = `[${(Math.round(coords[i]! * 1e7) / 1e7).toFixed(7)},${(Math.round(coords[i + 1]! * 1e7) / 1e7).toFixed(7)}]`;
      if (p !== last) pts.push(p);
      last = p;
    }
    if (pts.length === 1) pts.push(pts[0]!);
    return `[${pts.join(',')}]`.replaceAll('-0.0000000', '0.0000000');
  };

  it('writes 7 decimals for every magnitude and sign, drops repeated points, repeats a lone point', () => {
    let seed = 5;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const fixed = [
      0, 0, -0.00000004, 0.00000005, 9.9999999, -9.99999995, 10, -100, 179.9999999, -180, 35.9123, 31.9539,
    ];
    const random: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const scale = [1e-6, 1e-3, 1, 10, 100, 180][i % 6]!;
      random.push((rnd() * 2 - 1) * scale, (rnd() * 2 - 1) * Math.min(scale, 90));
      if (i % 7 === 0) random.push(random.at(-2)!, random.at(-2)!);
    }
    for (const coords of [fixed, random, [12.5, 41.9, 12.5, 41.9], [12.5, 41.9]]) {
      const text = lineJson(path(coords));
      expect(text).toBe(reference(coords));
      expect(JSON.parse(text)).toBeInstanceOf(Array);
    }
  });
});
