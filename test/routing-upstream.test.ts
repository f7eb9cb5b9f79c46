import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnginePath, RoutingEngine } from '../src/routing/types.js';
import { graphhopperEngine } from '../src/routing/upstream/graphhopper.js';
import { osrmEngine } from '../src/routing/upstream/osrm.js';
import { valhallaEngine } from '../src/routing/upstream/valhalla.js';
import { errorCode, startServer, storedRouteLegs } from './helpers/app.js';
import { pathLine, pathManeuvers } from '../src/routing/route-record.js';

// Recorded-shape response bodies of OSRM, Valhalla and GraphHopper served by a local HTTP server.
const fx = (name: string) => readFileSync(join(__dirname, 'fixtures', 'upstream', name), 'utf8');
const FROM = { lat: 43.731358, lng: 7.419558 },
  TO = { lat: 43.733427, lng: 7.423102 };

let server: Server;
let base = '';
/** mode: ok | noroute | fail | slow; requests are recorded for shape checks. */
let mode = 'ok';
const seen: Array<{ method: string; url: string; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body });
      const engine = req.url!.startsWith('/route/v1/') ? 'osrm' : req.method === 'POST' ? 'valhalla' : 'graphhopper';
      const send = (status: number, text: string) =>
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(text);
      if (mode === 'fail') return send(500, '{"message":"internal"}');
      if (mode === 'noroute') return send(400, fx(`${engine}-noroute.json`));
      const answer = () => send(200, fx(`${engine}-route.json`));
      if (mode === 'slow') setTimeout(answer, 600);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function checkPaths(paths: EnginePath[], types: string[]) {
  expect(paths.map((p) => p.label)).toEqual(['Fastest', 'Alternative 1']);
  const p = paths[0]!;
  const line = JSON.parse(pathLine(p)) as Array<[number, number]>;
  expect(line[0]![0]).toBeCloseTo(FROM.lng, 5);
  expect(line[0]![1]).toBeCloseTo(FROM.lat, 5);
  expect(line[line.length - 1]![1]).toBeCloseTo(TO.lat, 5);
  expect(p.distance_m).toBeGreaterThan(300);
  const m = pathManeuvers(p)!;
  expect(m.map((x) => x.type)).toEqual(types);
  expect(m[1]).toMatchObject({
    modifier: 'left',
    street_name: 'Avenue Prince Pierre',
    instruction: 'Turn left onto Avenue Prince Pierre',
  });
  expect(m[2]!.exit).toBe(2);
  expect(m[2]!.instruction).toMatch(/^At the roundabout, take the 2nd exit/);
  const sum = m.reduce((s, x) => s + x.distance_m, 0);
  expect(Math.abs(sum - p.distance_m)).toBeLessThan(1);
}

const engines: Array<[string, () => RoutingEngine]> = [
  ['osrm', () => osrmEngine(base, 2000)],
  ['valhalla', () => valhallaEngine(base, 2000)],
  ['graphhopper', () => graphhopperEngine(base, 2000)],
];

describe.each(engines)('%s adapter', (name, make) => {
  it('maps routes, alternatives and maneuvers; Arabic text by locale', async () => {
    mode = 'ok';
    seen.length = 0;
    const e = make();
    expect(e.name).toBe(name);
    const r = await e.route(FROM, TO, { alternatives: 2, locale: 'en', overview: 'full' });
    expect(r.kind).toBe('ok');
    // the simplified overview keeps some of the upstream's points, in order, the ends always
    const simple = await e.route(FROM, TO, { alternatives: 2, locale: 'en', overview: 'simplified' });
    if (r.kind !== 'ok' || simple.kind !== 'ok') throw new Error('no route');
    const full = JSON.parse(pathLine(r.paths[0]!)) as number[][],
      few = JSON.parse(pathLine(simple.paths[0]!)) as number[][];
    expect(few.length).toBeLessThanOrEqual(full.length);
    expect([few[0], few.at(-1)]).toEqual([full[0], full.at(-1)]);
    let at = 0;
    for (const pt of few) {
      const i = full.findIndex((q, k) => k >= at && q[0] === pt[0] && q[1] === pt[1]);
      expect(i).toBeGreaterThanOrEqual(at);
      at = i + 1;
    }
    expect(at).toBe(full.length);
    // GraphHopper reports the road after a roundabout as its own "continue" instruction
    const types =
      name === 'graphhopper'
        ? ['depart', 'turn', 'roundabout', 'continue', 'arrive']
        : ['depart', 'turn', 'roundabout', 'arrive'];
    if (r.kind === 'ok') checkPaths(r.paths, types);
    const ar = await e.route(FROM, TO, { alternatives: 2, locale: 'ar', overview: 'full' });
    if (ar.kind === 'ok')
      expect(pathManeuvers(ar.paths[0]!)![1]!.instruction).toBe('انعطف يسارًا إلى Avenue Prince Pierre');
    const req = seen[0]!;
    if (name === 'osrm')
      expect(req.url).toMatch(
        /^\/route\/v1\/driving\/7\.419558,43\.731358;7\.423102,43\.733427\?steps=true&geometries=geojson&overview=full&alternatives=2$/,
      );
    if (name === 'valhalla')
      expect(JSON.parse(req.body)).toMatchObject({
        costing: 'auto',
        alternates: 2,
        locations: [
          { lat: FROM.lat, lon: FROM.lng },
          { lat: TO.lat, lon: TO.lng },
        ],
      });
    if (name === 'graphhopper')
      expect(req.url).toMatch(/points_encoded=false.*point=43\.731358%2C7\.419558&point=43\.733427%2C7\.423102/);
  });

  it('"no route" answers are unroutable; server errors and timeouts throw', async () => {
    mode = 'noroute';
    expect(await make().route(FROM, TO, { alternatives: 0, locale: 'en', overview: 'full' })).toEqual({
      kind: 'unroutable',
    });
    mode = 'fail';
    await expect(make().route(FROM, TO, { alternatives: 0, locale: 'en', overview: 'full' })).rejects.toThrow(/500/);
    mode = 'slow';
    const quick = { osrm: osrmEngine, valhalla: valhallaEngine, graphhopper: graphhopperEngine }[name as 'osrm'](
      base,
      100,
    );
    await expect(quick.route(FROM, TO, { alternatives: 0, locale: 'en', overview: 'full' })).rejects.toThrow();
  });
});

describe('directions through an upstream engine (config routing.engine)', () => {
  it('names the engine, caches with it, degrades on budget expiry, 422 on no route', async () => {
    const s = await startServer({ routing: { engine: 'osrm', upstream_url: base, timeout_ms: 2000 } });
    try {
      const H = { 'X-API-Key': s.key().key };
      const body = { origin_lat: FROM.lat, origin_lng: FROM.lng, dest_lat: TO.lat, dest_lng: TO.lng };
      mode = 'ok';
      const a = (await (await s.post('/maps/v1/directions', body, H)).json()).data;
      expect(a).toMatchObject({ source: 'fresh', engine: 'osrm' });
      expect(a.routes).toHaveLength(2);
      const b = (await (await s.post('/maps/v1/directions', body, H)).json()).data;
      expect(b).toMatchObject({ source: 'memory', engine: 'osrm', distance_meters: a.distance_meters });
      // an upstream route (a network round trip) is kept in SQLite too, once the cache flushes (every 50 ms here)
      await new Promise((r) => setTimeout(r, 200));
      expect(storedRouteLegs(s.dataDir)).toBe(1);
      mode = 'slow';
      const other = { ...body, dest_lat: 43.7335 };
      const d = (await (await s.post('/maps/v1/directions', { ...other, max_wait_ms: 100 }, H)).json()).data;
      expect(d).toMatchObject({ partial: true, reason: 'degraded', source: 'server_straight', routes: [] });
      // the gather carried on: once it lands, the retry is a cache hit
      await new Promise((r) => setTimeout(r, 700));
      const retry = (await (await s.post('/maps/v1/directions', other, H)).json()).data;
      expect(retry.source).toBe('memory');
      mode = 'noroute';
      const u = await s.post('/maps/v1/directions', { ...body, dest_lat: 43.74 }, H);
      expect(u.status).toBe(422);
      expect(await errorCode(u)).toBe('DIRECTIONS_UNROUTABLE');
    } finally {
      await s.close();
    }
  });

  it('config refuses an unknown engine', async () => {
    await expect(startServer({ routing: { engine: 'waze' } })).rejects.toThrow(/routing\.engine/);
  });
});
