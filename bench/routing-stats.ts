/** Percentiles and timing helpers for the routing benchmark. */
export function pct(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export function timeEach<T>(items: T[], f: (x: T) => unknown): number[] {
  const out: number[] = [];
  for (const x of items) {
    const t0 = performance.now();
    f(x);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Deterministic PRNG (Park-Miller) so every run measures the same pairs. */
export function prng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}
