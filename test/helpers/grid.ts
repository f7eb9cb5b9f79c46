/** Random road-like graphs for routing tests. */

/**
 * A random W x W grid with some one-ways, as CSR arrays, and the seeded generator that built it (its sequence goes
 * on, so a test draws its queries from it).
 */
export function randomGrid(W: number, seed: number) {
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
