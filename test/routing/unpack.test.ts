import { describe, expect, it } from 'vitest';
import { buildCH } from '../../src/routing/build/ch-build.js';
import { CHQuery } from '../../src/routing/query/ch-query.js';
import { setUnpackKeep, setUnpackListLimit } from '../../src/routing/query/ch-unpack.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { lineJson } from '../../src/routing/answer/line-json.js';
import { assemble } from '../../src/routing/query/path.js';
import { randomGrid } from '../helpers/grid.js';

describe('CH unpacking', () => {
  it('unpacks every via path of a run like a plain descent, also when it copies the roads of CH edges met before', () => {
    const { g, rnd } = randomGrid(40, 11);
    const tailOf = new Int32Array(g.head.length);
    for (let u = 0; u < g.n; u++) for (let e = g.first[u]!; e < g.first[u + 1]!; e++) tailOf[e] = u;
    // the thread's list, and a query's own growable arrays for paths too long for it (a limit of 0 or 40 parts);
    // roads kept across queries as in service, and every shortcut of 2+ road edges kept in a budget of 60 (evicted
    // all the time)
    const chs = [buildCH(g), buildCH(g, { coreDegree: 4, smallCore: 0 })];
    for (const [limit, ch, keep] of [
      [Infinity, chs[0]!, [] as number[]],
      [Infinity, chs[1]!, []],
      [0, chs[0]!, []],
      [40, chs[1]!, []],
      [Infinity, chs[0]!, [2, 60]],
      [40, chs[1]!, [2, 60]],
    ] as const) {
      setUnpackListLimit(limit);
      setUnpackKeep(...keep);
      const q = new CHQuery(ch, ch.coreNodes);
      const unpacker = (q as unknown as { unpacker: { kept: Map<number, Uint32Array>; keptEdges: number } }).unpacker;
      let copied = 0,
        keptHits = 0;
      const fromEarlier = new Set<number>();
      for (let i = 0; i < 40; i++) {
        const s = Math.floor(rnd() * g.n),
          t = Math.floor(rnd() * g.n);
        if (!q.run([[s, 0]], [[t, 0]], Infinity)) continue;
        const seenEdges = new Set<number>();
        // several via nodes of one run: their paths share CH edges near the seeds
        for (const v of q.meetNodes.slice(0, 8)) {
          const packed = q.packed(v);
          for (const e of packed) if (!seenEdges.has(e) && unpacker.kept.has(e)) keptHits++;
          const want: number[] = [];
          for (const e of packed) q.expand(e, want);
          expect(Array.from(q.unpack(v))).toEqual(want);
          for (const e of packed) if (seenEdges.has(e)) copied++;
          for (const e of packed) seenEdges.add(e);
          // a road is connected: each edge starts where the one before ended
          for (let k = 1; k < want.length; k++) expect(tailOf[want[k]!]).toBe(g.head[want[k - 1]!]);
        }
        for (const e of unpacker.kept.keys()) fromEarlier.add(e);
      }
      expect(copied).toBeGreaterThan(0);
      const keptEdges = [...unpacker.kept.values()].reduce((n, r) => n + r.length, 0);
      expect(unpacker.keptEdges).toBe(keptEdges);
      if (keep.length) {
        expect(keptHits).toBeGreaterThan(0); // roads from earlier queries were copied (and matched a descent)
        expect(keptEdges).toBeLessThanOrEqual(60);
        expect(fromEarlier.size).toBeGreaterThan(unpacker.kept.size); // and some were let go
      }
    }
    setUnpackListLimit(Infinity);
    setUnpackKeep();
  });
});

describe('route line text', () => {
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
      const text = lineJson(Float64Array.from(coords), coords.length / 2);
      expect(text).toBe(reference(coords));
      expect(JSON.parse(text)).toBeInstanceOf(Array);
    }
  });
});

describe('route assembly', () => {
  /**
   * A one-way line of N nodes, edge i from node i to i + 1 on segment i; every 5th edge joins two nodes at one
   * position (zero length), ways change every 3 edges.
   */
  function line(N: number) {
    const lon: number[] = [],
      lat: number[] = [];
    for (let i = 0, x = 7; i < N; i++) {
      if (i % 5 !== 0 || i < 2 || i > N - 3) x += 1e-4;
      lon.push(x);
      lat.push(43.7 + i * 1e-6);
    }
    const E = N - 1;
    const first = new Uint32Array(N + 1);
    for (let u = 0; u <= N; u++) first[u] = Math.min(u, E);
    const segFirst = new Uint32Array(2 * E + 1);
    for (let s = 0; s < E; s++) {
      segFirst[2 * s] = s;
      segFirst[2 * s + 1] = s + 1;
    }
    segFirst[2 * E] = E;
    const idx = Uint32Array.from({ length: E }, (_, i) => i);
    const g = {
      lon: Float64Array.from(lon),
      lat: Float64Array.from(lat),
      first,
      head: Uint32Array.from({ length: E }, (_, i) => i + 1),
      ms: Uint32Array.from({ length: E }, (_, i) => (lon[i] === lon[i + 1] ? 0 : 900 + (i % 7))),
      dist: Float32Array.from({ length: E }, (_, i) => (lon[i] === lon[i + 1] ? 0 : 8.1 + (i % 3))),
      way: Uint32Array.from({ length: E }, (_, i) => Math.floor(i / 3)),
      segA: idx,
      segB: Uint32Array.from({ length: E }, (_, i) => i + 1),
      segFirst,
      segEdges: idx,
    };
    const snap = (s: number) => ({
      seg: s,
      t: 0.5,
      lon: (lon[s]! + lon[s + 1]!) / 2,
      lat: (lat[s]! + lat[s + 1]!) / 2,
      meters: 0,
    });
    return { g: g as unknown as RoadGraph, from: snap(0), to: snap(E - 1), edges: idx.slice(1, E - 1), E };
  }

  it('drops zero-length pieces', () => {
    const { g, from, to, edges, E } = line(400);
    const p = assemble(g, from, to, 1, edges, E - 1);
    const zero = Array.from(edges).filter((e) => g.dist[e] === 0);
    expect(zero.length).toBeGreaterThan(50);
    expect(p.n).toBe(edges.length - zero.length + 2); // the partial pieces at both ends
    expect(p.ms).toBe(Array.from(edges).reduce((s, e) => s + g.ms[e]!, 0) + g.ms[0]! / 2 + g.ms[E - 1]! / 2);
    expect(Array.from(p.time).reduce((x, y) => x + y, 0)).toBeCloseTo(p.ms, 6);
    // the snapped start's partial piece to node 1, a piece per edge of some length, the partial piece to the end
    const kept = Array.from(edges).filter((e) => g.dist[e] !== 0);
    expect(Array.from(p.node)).toEqual([1, ...kept.map((e) => e + 1), -1]);
    expect(Array.from(p.chain).every((c) => c === -1)).toBe(true);
    expect(Array.from(p.way)).toEqual([0, ...kept.map((e) => g.way[e]!), g.way[E - 1]!]);
    // each piece starts where the last one ended: its points are the kept edges' heads
    for (let i = 1; i + 1 < p.n; i++)
      expect([p.pts[2 * i + 2], p.pts[2 * i + 3]]).toEqual([g.lon[kept[i - 1]! + 1], g.lat[kept[i - 1]! + 1]]);
  });
});
