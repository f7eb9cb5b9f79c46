import { describe, expect, it } from 'vitest';
import { buildRoadGraph } from '../../src/import/roads/build-graph.js';
import type { OsmRoads } from '../../src/import/roads/osm-read.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { turnOnto } from '../../src/routing/query/chains.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { pathManeuvers } from '../../src/routing/answer/route-record.js';
import { turnAngle, turnMs, U_TURN_MS } from '../../src/routing/build/turn-cost.js';
import { osmRoads } from '../helpers/osm-roads.js';

/**
 * A crossroads C with four two-way arms: west W - C - east E (one way across), north C - N, south C - S; N is a dead
 * end, E bends into a road that goes on north from E (two roads meet there: E - F); S goes on to a T junction T with
 * a side road T - T2. Coordinates on a 0.002 degree grid at Amman's latitude.
 */
function crossroads(): OsmRoads {
  const at: Record<string, [number, number]> = {
    W: [0, -1],
    C: [0, 0],
    E: [0, 1],
    N: [1, 0],
    S: [-1, 0],
    F: [1, 1],
    T: [-2, 0],
    T2: [-2, 1],
    T3: [-3, 0],
  };
  const names = Object.keys(at);
  const id = (k: string) => names.indexOf(k);
  const ways = [
    ['W', 'C', 'E'],
    ['C', 'N'],
    ['C', 'S', 'T', 'T3'],
    ['E', 'F'],
    ['T', 'T2'],
  ].map((w) => w.map(id));
  return osmRoads(
    names.map((k) => [31.95 + at[k]![0] * 0.002, 35.91 + at[k]![1] * 0.002]),
    ways,
    { kmh: 36 },
  );
}

/** The chain driven from place a to place b (both junctions), by coordinates (`o`: the reader's, kept). */
function chainBetween(g: RoadGraph, o: { lat: Float64Array; lon: Float64Array }, a: number, b: number): number {
  const same = (v: number, k: number) => g.lat[v] === o.lat[k] && g.lon[v] === o.lon[k];
  for (let j = 0; j + 1 < g.cFirst.length; j++)
    for (let c = g.cFirst[j]!; c < g.cFirst[j + 1]!; c++)
      if (same(g.jNode[j]!, a) && same(g.jNode[g.cHead[c]!]!, b)) return c;
  throw new Error(`no chain from ${a} to ${b}`);
}

describe('turn costs', () => {
  const roads = crossroads();
  const o = { lat: roads.lat.slice(), lon: roads.lon.slice() }; // the build lets go of the reader's coordinates
  const g = buildRoadGraph(roads, 'turns');
  const [W, C, E, N, S, F, T, T2] = [0, 1, 2, 3, 4, 5, 6, 7];
  const chain = (a: number, b: number) => chainBetween(g, o, a, b);
  const cost = (a: number, v: number, b: number) => {
    const t = turnOnto(g, chain(a, v), chain(v, b));
    return t < 0 ? undefined : g.tMs[t];
  };

  it('the model: sharper costs more, a left turn more than a right, only where three roads or more meet', () => {
    expect(turnAngle(0, 0, 0, 1, -1, 1)).toBeCloseTo(90, 6); // heading east, then south: right
    expect(turnAngle(0, 0, 0, 1, 1, 1)).toBeCloseTo(-90, 6);
    expect(turnAngle(0, 0, 0, 1, 0, 2)).toBeCloseTo(0, 6);
    expect(turnMs(90, 3)).toBeGreaterThan(turnMs(45, 3));
    expect(turnMs(-90, 3)).toBeGreaterThan(turnMs(90, 3));
    expect(turnMs(0, 3)).toBe(0);
    expect(turnMs(0, 4)).toBeGreaterThan(0); // straight across a crossroads waits for cross traffic
    expect(turnMs(-90, 2)).toBe(0);
  });

  it('every turn at the crossroads is priced, U-turns exist only at the dead end', () => {
    const straight = cost(W, C, E)!,
      right = cost(W, C, T)!, // S only shapes the road C - T
      left = cost(W, C, N)!;
    expect(straight).toBe(turnMs(0, 4));
    expect(right).toBe(turnMs(90, 4));
    expect(left).toBe(turnMs(-90, 4));
    expect(left).toBeGreaterThan(right);
    expect(right).toBeGreaterThan(straight);
    expect(cost(W, C, W)).toBeUndefined(); // no U-turn where there is another way on
    expect(cost(N, C, N)).toBeUndefined();
    // N is a dead end: the one way on is back, at the U-turn's price
    expect(g.tFirst[chain(C, N) + 1]! - g.tFirst[chain(C, N)]!).toBe(1);
    expect(cost(C, N, C)).toBe(U_TURN_MS);
    // and only there: one U-turn at each of the five dead ends (W, N, F, T2, T3), none anywhere else
    expect(Array.from(g.tMs).filter((ms) => ms === U_TURN_MS)).toHaveLength(5);
    // two roads meet at E (a bend): free; at the T junction, a turn into the side road is priced for 3 roads
    expect(cost(C, E, F)).toBe(0);
    expect(cost(C, T, T2)).toBe(
      turnMs(turnAngle(o.lat[S]!, o.lon[S]!, o.lat[T]!, o.lon[T]!, o.lat[T2]!, o.lon[T2]!), 3),
    );
    expect(cost(C, T, T2)).toBeGreaterThan(0);
  });

  it('routes pay their turns: in the total and in the maneuver after each', () => {
    const e = new BuiltinEngine(g, { snapMaxMeters: 100 });
    const mid = (a: number, b: number) => ({ lat: (o.lat[a]! + o.lat[b]!) / 2, lng: (o.lon[a]! + o.lon[b]!) / 2 });
    const drive = (a: number, b: number) => {
      const r = e.routeSync(mid(W, C), mid(a, b), { alternatives: 0, locale: 'en' });
      if (r.kind !== 'ok') throw new Error('unroutable');
      return { p: r.paths[0]!, m: pathManeuvers(r.paths[0]!)! };
    };
    const toN = drive(C, N),
      toS = drive(C, S),
      toE = drive(C, E);
    // at 36 km/h a road takes distance / 10 s; the rest is the turn at C
    const turn = (p: { distance_m: number; duration_s: number }) => p.duration_s - p.distance_m / 10;
    expect(turn(toE.p)).toBeCloseTo(cost(W, C, E)! / 1000, 2);
    expect(turn(toS.p)).toBeCloseTo(cost(W, C, T)! / 1000, 2);
    expect(turn(toN.p)).toBeCloseTo(cost(W, C, N)! / 1000, 2);
    // the maneuvers' durations add up to the route's, the turn counted in the maneuver that makes it
    for (const { p, m } of [toN, toS, toE]) {
      expect(m.reduce((s, x) => s + x.duration_s, 0)).toBeCloseTo(p.duration_s, 0);
    }
    expect(toN.m[1]).toMatchObject({ type: 'turn', modifier: 'left' });
    expect(toN.m[1]!.duration_s).toBeGreaterThan(toS.m[1]!.duration_s);
  });
});
