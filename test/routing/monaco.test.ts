import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haversineMeters } from '../../src/core/geo.js';
import { GRAPH_FILE, loadGraph } from '../../src/routing/graph.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { errorCode, startServer, type TestServer } from '../helpers/app.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

// Real data through the real CLI and HTTP server: the Monaco extract (© OpenStreetMap contributors, ODbL).
const CLI = ['--import', 'tsx', join(__dirname, '..', 'helpers', 'run-cli.ts')];

let dataDir: string;
let summary: Array<{ importer: string; counts: Record<string, number> }>;
let g: RoadGraph;
let s: TestServer;
let H: Record<string, string>;
const edges = new Set<string>();
const neighbours = new Map<string, number[][]>();
const key = (c: number[]) => `${c[0]},${c[1]}`;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-routing-'));
  const r = spawnSync(
    process.execPath,
    [...CLI, 'import', MONACO_PBF, '--data', dataDir, '--only', 'roads', '--json'],
    { encoding: 'utf8', env: { ...process.env, SVCMAPS_DATA: '' } },
  );
  if (r.status !== 0) throw new Error(`import failed (${r.status}): ${r.stderr}`);
  summary = JSON.parse(r.stdout);
  g = loadGraph(join(dataDir, GRAPH_FILE));
  for (let u = 0; u < g.meta.nodes; u++) {
    for (let e = g.first[u]!; e < g.first[u + 1]!; e++) {
      const a = [g.lon[u]!, g.lat[u]!],
        b = [g.lon[g.head[e]!]!, g.lat[g.head[e]!]!];
      edges.add(`${key(a)}>${key(b)}`);
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        if (!neighbours.has(key(x!))) neighbours.set(key(x!), []);
        neighbours.get(key(x!))!.push(y!);
      }
    }
  }
  s = await startServer({ data_dir: dataDir, prefetch: { concurrency: 4, timeout_ms: 20_000 } });
  H = { 'X-API-Key': s.key().key };
}, 60_000);

afterAll(async () => {
  await s?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const body = (
  a: { lat: number; lng: number },
  b: { lat: number; lng: number },
  extra: Record<string, unknown> = {},
) => ({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng, ...extra });

async function directions(
  a: { lat: number; lng: number },
  b: { lat: number; lng: number },
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const res = await s.post('/maps/v1/directions', body(a, b, extra), { ...H, ...headers });
  return { status: res.status, data: (await res.json()).data, res };
}

/** Distance (m) from point p to segment a-b, in a local flat frame. */
function toSegment(p: number[], a: number[], b: number[]): number {
  const kx = 111_320 * Math.cos((p[1]! * Math.PI) / 180),
    ky = 110_574;
  const ax = (a[0]! - p[0]!) * kx,
    ay = (a[1]! - p[1]!) * ky,
    bx = (b[0]! - p[0]!) * kx,
    by = (b[1]! - p[1]!) * ky;
  const dx = bx - ax,
    dy = by - ay,
    l2 = dx * dx + dy * dy;
  const t = l2 ? Math.min(1, Math.max(0, -(ax * dx + ay * dy) / l2)) : 0;
  return Math.hypot(ax + t * dx, ay + t * dy);
}

/** Interior polyline steps are graph edges (in the driven direction); end steps run along an edge from a snap. */
function assertOnGraph(coords: number[][]) {
  // the snapped end lies on a segment (either direction) that touches the graph node next to it
  const onSomeEdgeOf = (p: number[], node: number[]) =>
    (neighbours.get(key(node)) ?? []).some((o) => toSegment(p, node, o) < 0.5);
  for (let i = 0; i + 1 < coords.length; i++) {
    const a = coords[i]!,
      b = coords[i + 1]!;
    if (edges.has(`${key(a)}>${key(b)}`)) continue;
    if (i === 0 && onSomeEdgeOf(a, b)) continue;
    if (i + 1 === coords.length - 1 && onSomeEdgeOf(b, a)) continue;
    if (coords.length === 2) continue; // both ends on one segment (checked by the caller's distance bounds)
    throw new Error(`step ${i} ${key(a)} -> ${key(b)} is not on the road graph`);
  }
}

let seed = 42;
const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
/** A random point within ~60 m of a random road node. */
const randomPoint = () => {
  const v = g.segA[Math.floor(rnd() * g.segA.length)]!;
  return { lat: g.lat[v]! + (rnd() - 0.5) * 0.001, lng: g.lon[v]! + (rnd() - 0.5) * 0.001 };
};

describe('routing over the imported Monaco graph', () => {
  it('the CLI import builds the graph with its contraction hierarchy and turn restrictions', () => {
    const roads = summary.find((x) => x.importer === 'roads')!;
    expect(roads.counts.ways).toBeGreaterThan(1000);
    expect(roads.counts.nodes).toBeGreaterThan(10_000);
    expect(roads.counts.shortcuts).toBeGreaterThan(0);
    // the hierarchy is over junctions and the chains of road edges between them
    expect(roads.counts.junctions).toBeLessThan(roads.counts.nodes / 2);
    expect(roads.counts.chains).toBeLessThan(roads.counts.edges / 2);
    expect(roads.counts.restrictions).toBeGreaterThan(0);
    expect(g.meta.nodes).toBeGreaterThan(g.meta.baseNodes); // restricted junctions were split
  });

  it('routes lie on imported ways, are at least the straight line, sane detour factor, maneuvers add up', async () => {
    let checked = 0,
      sane = 0;
    while (checked < 25) {
      const a = randomPoint(),
        b = randomPoint();
      if (haversineMeters(a, b) < 50) continue;
      const r = await directions(a, b, { overview: 'full' });
      if (r.status === 422) continue; // clipped carriageways at the extract edge
      expect(r.status).toBe(200);
      const d = r.data;
      expect(d.source).toBe('fresh');
      expect(d.engine).toBe('svc');
      expect(d.routes.length).toBeGreaterThanOrEqual(1);
      expect(d.routes[0].label).toBe('Fastest');
      const line = JSON.parse(d.polyline);
      expect(line.type).toBe('LineString');
      assertOnGraph(line.coordinates);
      const c = line.coordinates;
      const straight = haversineMeters(
        { lat: c[0][1], lng: c[0][0] },
        { lat: c[c.length - 1][1], lng: c[c.length - 1][0] },
      );
      expect(d.distance_meters).toBeGreaterThanOrEqual(Math.floor(straight) - 1);
      if (d.distance_meters < 3 * straight + 200) sane++;
      for (const route of d.routes) {
        const m = route.maneuvers;
        expect(m[0].type).toBe('depart');
        expect(m[m.length - 1].type).toBe('arrive');
        const sumD = m.reduce((x: number, y: any) => x + y.distance_m, 0),
          sumT = m.reduce((x: number, y: any) => x + y.duration_s, 0);
        expect(Math.abs(sumD - route.distance_meters)).toBeLessThanOrEqual(1);
        expect(Math.abs(sumT - route.duration_seconds)).toBeLessThanOrEqual(1);
        for (const x of m) expect(typeof x.instruction).toBe('string');
        assertOnGraph(JSON.parse(route.polyline).coordinates);
      }
      checked++;
    }
    expect(sane).toBeGreaterThanOrEqual(20);
  });

  it('alternatives are labelled, genuinely different and not much longer', async () => {
    let found = 0;
    for (let i = 0; i < 40 && found < 3; i++) {
      const a = randomPoint(),
        b = randomPoint();
      if (haversineMeters(a, b) < 800) continue;
      const r = await directions(a, b, { overview: 'full' });
      if (r.status !== 200 || r.data.routes.length < 2) continue;
      found++;
      const routes = r.data.routes;
      expect(routes.map((x: any) => x.label)).toEqual(
        ['Fastest', 'Alternative 1', 'Alternative 2'].slice(0, routes.length),
      );
      const lines = routes.map((x: any) => JSON.parse(x.polyline).coordinates.map(key) as string[]);
      for (let k = 1; k < routes.length; k++) {
        expect(routes[k].duration_seconds).toBeLessThanOrEqual(routes[0].duration_seconds * 1.4 + 1);
        expect(routes[k].duration_seconds).toBeGreaterThanOrEqual(routes[0].duration_seconds - 1);
        const pts = new Set(lines[0]);
        const sharedPts = lines[k].filter((p: string) => pts.has(p)).length;
        expect(sharedPts / lines[k].length).toBeLessThan(0.9);
      }
    }
    expect(found).toBeGreaterThanOrEqual(2);
  });

  it('one-way streets: A->B along a one-way is direct, B->A has to go around', async () => {
    let tested = false;
    for (let seg = 0; seg < g.segA.length && !tested; seg++) {
      const fwd = g.segFirst[2 * seg + 1]! - g.segFirst[2 * seg]!,
        bwd = g.segFirst[2 * seg + 2]! - g.segFirst[2 * seg + 1]!;
      if (!fwd || bwd || g.segTiny[seg]) continue;
      const A = g.segA[seg]!,
        B = g.segB[seg]!;
      if (haversineMeters({ lat: g.lat[A]!, lng: g.lon[A]! }, { lat: g.lat[B]!, lng: g.lon[B]! }) < 60) continue;
      const at = (t: number) => ({
        lat: g.lat[A]! + t * (g.lat[B]! - g.lat[A]!),
        lng: g.lon[A]! + t * (g.lon[B]! - g.lon[A]!),
      });
      const ab = await directions(at(0.3), at(0.7));
      const ba = await directions(at(0.7), at(0.3));
      if (ab.status !== 200 || ba.status !== 200) continue;
      expect(ba.data.distance_meters).toBeGreaterThan(ab.data.distance_meters + 50);
      tested = true;
    }
    expect(tested).toBe(true);
  });

  it('the default line is the simplified overview of the full one; each is cached apart; a bad overview is 400', async () => {
    const a = { lat: 43.7311, lng: 7.4197 },
      b = { lat: 43.745, lng: 7.43 };
    const simple = await directions(a, b);
    const full = await directions(a, b, { overview: 'full' });
    expect([simple.data.source, full.data.source]).toEqual(['fresh', 'fresh']);
    expect((await directions(a, b, { overview: 'simplified' })).data).toMatchObject({
      source: 'memory',
      polyline: simple.data.polyline,
    });
    expect(simple.data.distance_meters).toBe(full.data.distance_meters);
    expect(simple.data.routes[0].maneuvers).toEqual(full.data.routes[0].maneuvers);
    const fine = JSON.parse(full.data.polyline).coordinates as number[][],
      few = JSON.parse(simple.data.polyline).coordinates as number[][];
    assertOnGraph(fine);
    expect(few.length).toBeLessThan(fine.length);
    expect([few[0], few.at(-1)]).toEqual([fine[0], fine.at(-1)]);
    // every kept point is one of the full line's, in order; every dropped one within half a pixel of the route's
    // extent over 1024 pixels (measured as the module does, flat at the middle latitude) of the segment kept over it
    const xs = fine.map((p) => p[0]!),
      ys = fine.map((p) => p[1]!);
    const midLat = (Math.min(...ys) + Math.max(...ys)) / 2,
      c = Math.cos((midLat * Math.PI) / 180);
    const extentM = 111_320 * Math.max((Math.max(...xs) - Math.min(...xs)) * c, Math.max(...ys) - Math.min(...ys));
    let at = 0;
    for (let k = 0; k + 1 < few.length; k++) {
      const i = fine.findIndex((p, j) => j >= at && key(p) === key(few[k]!));
      const j = fine.findIndex((p, m) => m > i && key(p) === key(few[k + 1]!));
      expect(i).toBeGreaterThanOrEqual(at);
      expect(j).toBeGreaterThan(i);
      for (let m = i + 1; m < j; m++)
        expect(toSegment(fine[m]!, few[k]!, few[k + 1]!)).toBeLessThanOrEqual(extentM / 2048 + 0.01);
      at = j;
    }
    expect(at).toBe(fine.length - 1);
    for (const overview of ['none', 'FULL', true, 1]) {
      const r = await s.post('/maps/v1/directions', body(a, b, { overview }), H);
      expect(r.status).toBe(400);
      expect(await errorCode(r)).toBe('VALIDATION_ERROR');
    }
  });

  it('a point far out at sea is unroutable: 422 DIRECTIONS_UNROUTABLE', async () => {
    const r = await s.post('/maps/v1/directions', body({ lat: 43.69, lng: 7.45 }, { lat: 43.7384, lng: 7.4246 }), H);
    expect(r.status).toBe(422);
    expect(await errorCode(r)).toBe('DIRECTIONS_UNROUTABLE');
  });

  it('waypoints give the multi-leg shape', async () => {
    const r = await directions(
      { lat: 43.7311, lng: 7.4197 },
      { lat: 43.745, lng: 7.43 },
      { waypoints: [{ lat: 43.7384, lng: 7.4246 }], overview: 'full' },
    );
    expect(r.status).toBe(200);
    expect(r.data).toMatchObject({ legs: 2, partial: false, source: 'svc_multileg' });
    const ml = JSON.parse(r.data.polyline);
    expect(ml.type).toBe('MultiLineString');
    expect(ml.coordinates).toHaveLength(2);
    for (const leg of ml.coordinates) assertOnGraph(leg);
  });

  it('a second identical call is a memory cache hit; coarse_origin shares a ~110 m origin cell', async () => {
    const a = { lat: 43.73182, lng: 7.41853 },
      b = { lat: 43.74021, lng: 7.42713 };
    const first = await directions(a, b);
    expect(first.data.source).toBe('fresh');
    const second = await directions(a, b);
    expect(second.data).toMatchObject({ source: 'memory', engine: 'svc', distance_meters: first.data.distance_meters });
    // ~35 m away: another fine cell (fresh) but the same coarse cell (hit after the first coarse request)
    const near = { lat: 43.73151, lng: 7.41853 };
    expect((await directions(near, b)).data.source).toBe('fresh');
    expect((await directions(a, b, { coarse_origin: true })).data.source).toBe('fresh');
    expect((await directions(near, b, { coarse_origin: true })).data.source).toBe('memory');
  });

  it('prefetch-directions fills the cache: the following directions call is a hit', async () => {
    const a = { lat: 43.7275, lng: 7.4155 },
      b = { lat: 43.7478, lng: 7.4353 };
    const p = await s.post('/maps/v1/prefetch-directions', body(a, b), H);
    expect((await p.json()).data).toEqual({ queued: true, legs: 1 });
    let source = '';
    for (let i = 0; i < 1500 && source !== 'memory'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      source = (await directions(a, b)).data.source;
    }
    expect(source).toBe('memory');
  });

  it('Arabic instructions with Accept-Language: ar', async () => {
    const r = await directions(
      { lat: 43.7311, lng: 7.4197 },
      { lat: 43.745, lng: 7.43 },
      {},
      { 'Accept-Language': 'ar' },
    );
    const m = r.data.routes[0].maneuvers;
    expect(m[0].instruction).toMatch(/^اتجه نحو/);
    expect(m[m.length - 1].instruction).toBe('لقد وصلت إلى وجهتك');
    expect(
      m.some(
        (x: any) =>
          /[\u0600-\u06FF]/.test(x.instruction) && ['turn', 'continue', 'roundabout', 'fork', 'merge'].includes(x.type),
      ),
    ).toBe(true);
  });
});
