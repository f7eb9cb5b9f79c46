import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, errorCode, type TestServer } from '../helpers/app.js';
import type { RoutingEngine } from '../../src/routing/types.js';
import { noTiles } from '../../src/tiles/no-origin.js';
import { noStaticMaps } from '../../src/tiles/staticmap.js';
import { enginePath } from '../../src/routing/answer/route-record.js';

/** Engine whose answer depends on the origin latitude, to reach each response shape deterministically. */
const engine: RoutingEngine = {
  name: 'svc',
  async route(a, b) {
    if (a.lat === 10.5) return { kind: 'unroutable' };
    if (a.lat === 11.5) return new Promise(() => {}); // never answers: budget expiry
    if (a.lat === 12.5) throw new Error('graph exploded');
    return {
      kind: 'ok',
      paths: [
        enginePath({
          label: 'Fastest',
          line: JSON.stringify([
            [a.lng, a.lat],
            [b.lng, b.lat],
          ]),
          distance_m: 1234.4,
          duration_s: 99.6,
          maneuvers: [{ type: 'depart', instruction: 'Head north', distance_m: 1234.4, duration_s: 99.6 }],
        }),
      ],
    };
  },
};

describe('JSON endpoint validation and empty-engine answers', () => {
  let s: TestServer;
  let H: Record<string, string>;
  beforeAll(async () => {
    // No tile origin and no static-map renderer: the empty answers the spec prescribes (404, 502).
    s = await startServer({}, { tiles: noTiles, staticMaps: noStaticMaps });
    H = { 'X-API-Key': s.key().key };
  });
  afterAll(() => s?.close());

  it('autocomplete: empty q is an immediate empty_query, otherwise the empty engine says empty', async () => {
    const e = await (await s.get('/maps/v1/autocomplete?q=%20%20', H)).json();
    expect(e.data).toEqual({ predictions: [], source: 'empty_query', served_in_ms: 0, budget_expired: false });
    const r = await (await s.get('/maps/v1/autocomplete?q=amman&lat=abc&country=zzz1&max_wait_ms=5', H)).json();
    expect(r).toMatchObject({
      status: 'success',
      message: 'OK',
      data: { predictions: [], source: 'empty', budget_expired: false },
    });
    expect(Number.isInteger(r.data.served_in_ms)).toBe(true);
  });

  it('geocode: missing, empty, non-string address is VALIDATION_ERROR naming address; no match omits every field', async () => {
    for (const body of [{}, { address: '' }, { address: '   ' }, { address: 42 }]) {
      const r = await s.post('/maps/v1/geocode', body, H);
      expect(r.status).toBe(400);
      const j = await r.json();
      expect(j.error.code).toBe('VALIDATION_ERROR');
      expect(j.error.message).toMatch(/^address/);
    }
    const r = await (await s.post('/maps/v1/geocode', { address: 'Rainbow Street, Amman' }, H)).json();
    expect(r.data).toEqual({ matched: false });
  });

  it('reverse: lat/lng required, non-zero, in range; the empty engine answers no_address', async () => {
    const bad = [
      {},
      { lat: 31.9 },
      { lat: 0, lng: 35.9 },
      { lat: 31.9, lng: 0 },
      { lat: '31.9', lng: 35.9 },
      { lat: 95, lng: 35 },
    ];
    for (const body of bad) {
      const r = await s.post('/maps/v1/reverse', body, H);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(await errorCode(r)).toBe('VALIDATION_ERROR');
    }
    const r = await (await s.post('/maps/v1/reverse', { lat: 31.95, lng: 35.91 }, H)).json();
    expect(r.data).toEqual({ lat: 31.95, lng: 35.91, formatted_address: '', source: 'no_address' });
  });

  it('place: MISSING_ID, BAD_PLACE_ID, the three ID shapes with prefixes, cache_only minimal record', async () => {
    expect(await errorCode(await s.get('/maps/v1/place/', H))).toBe('MISSING_ID');
    expect(await errorCode(await s.get('/maps/v1/place', H))).toBe('MISSING_ID');
    expect(await errorCode(await s.get('/maps/v1/place/g_', H))).toBe('MISSING_ID');
    for (const id of ['hello', 'g_12345', '0x12:zz', '../../etc/passwd', 'ChIJ']) {
      expect(await errorCode(await s.get(`/maps/v1/place/${encodeURIComponent(id)}`, H)), id).toBe('BAD_PLACE_ID');
    }
    for (const id of [
      'g_ChIJN1t_tDeuEmsRUsoyG83frY4',
      'w_0x3e5f43496ad9c645:0xbde66e5084295162',
      'g_00ab34cd56ef7890',
    ]) {
      const r = await s.get(`/maps/v1/place/${id}?cache_only=true&lat=31.95&lng=35.91&q=Cafe`, H);
      expect(r.status, id).toBe(200);
      const j = await r.json();
      expect(j.data).toMatchObject({ place_id: id.slice(2), name: 'Cafe', lat: 31.95, lng: 35.91 });
    }
    const full = await s.get('/maps/v1/place/00ab34cd56ef7890', H);
    expect(full.status).toBe(503);
    expect(await errorCode(full)).toBe('PLACE_UNAVAILABLE');
    expect(full.headers.get('retry-after')).toBe('5');
  });

  it('place-photos: MISSING_COORDS for missing or non-numeric coordinates, else 200 with an array', async () => {
    for (const q of ['', '?lat=31.9', '?lat=abc&lng=35', '?lat=0&lng=0']) {
      expect(await errorCode(await s.get(`/maps/v1/place-photos${q}`, H)), q).toBe('MISSING_COORDS');
    }
    expect((await (await s.get('/maps/v1/place-photos?lat=31.95&lng=35.91', H)).json()).data).toEqual({
      place_id: '',
      photos: [],
    });
  });

  it('directions: every validation code of the spec', async () => {
    const base = { origin_lat: 31.95, origin_lng: 35.91, dest_lat: 31.99, dest_lng: 35.87 };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, origin_lat: undefined }, 'VALIDATION_ERROR'],
      [{ ...base, dest_lng: 0 }, 'VALIDATION_ERROR'],
      [{ ...base, origin_lat: 'x' }, 'VALIDATION_ERROR'],
      [{ ...base, dest_lat: 123 }, 'VALIDATION_ERROR'],
      [{ ...base, dest_lat: 31.95, dest_lng: 35.91 }, 'SAME_POINT'],
      [{ ...base, enrich_maneuvers: true }, 'ENRICH_MANEUVERS_UNSUPPORTED'],
      [{ ...base, waypoints: Array(5).fill({ lat: 31.96, lng: 35.9 }) }, 'TOO_MANY_WAYPOINTS'],
      [{ ...base, waypoints: [{ lat: 0, lng: 0 }] }, 'BAD_WAYPOINT'],
      [{ ...base, waypoints: [{ lat: 91, lng: 35 }] }, 'BAD_WAYPOINT'],
      [{ ...base, waypoints: [{ lat: 'NaN', lng: 35 }] }, 'BAD_WAYPOINT'],
      [{ ...base, waypoints: ['31.9,35.9'] }, 'BAD_WAYPOINT'],
      [{ ...base, waypoints: 'none' }, 'VALIDATION_ERROR'],
    ];
    for (const [body, code] of cases) {
      for (const path of ['/maps/v1/directions', '/maps/v1/prefetch-directions']) {
        const r = await s.post(path, body, H);
        expect(r.status, `${path} ${code}`).toBe(400);
        expect(await errorCode(r)).toBe(code);
      }
    }
  });

  it('directions without a road graph: the degraded straight line (200), and the partial multi-leg shape', async () => {
    const r = await (
      await s.post('/maps/v1/directions', { origin_lat: 31.95, origin_lng: 35.91, dest_lat: 31.99, dest_lng: 35.87 }, H)
    ).json();
    expect(r.data).toMatchObject({ routes: [], partial: true, reason: 'degraded', source: 'server_straight' });
    const line = JSON.parse(r.data.polyline);
    expect(line).toEqual({
      type: 'LineString',
      coordinates: [
        [35.91, 31.95],
        [35.87, 31.99],
      ],
    });
    expect(r.data.distance_meters).toBeGreaterThan(5800); // haversine: 5.83 km
    expect(r.data.distance_meters).toBeLessThan(5870);
    expect(r.data.duration_seconds).toBe(Math.round(r.data.distance_meters / 4));
    const m = await (
      await s.post(
        '/maps/v1/directions',
        {
          origin_lat: 31.95,
          origin_lng: 35.91,
          dest_lat: 31.99,
          dest_lng: 35.87,
          waypoints: [{ lat: 31.97, lng: 35.89 }],
        },
        H,
      )
    ).json();
    expect(m.data).toMatchObject({ legs: 2, partial: true, source: 'svc_multileg_partial' });
    expect(m.data).not.toHaveProperty('routes');
    expect(JSON.parse(m.data.polyline).type).toBe('MultiLineString');
    const tiny = await (
      await s.post(
        '/maps/v1/directions',
        { origin_lat: 31.95, origin_lng: 35.91, dest_lat: 31.9501, dest_lng: 35.9101 },
        H,
      )
    ).json();
    expect(tiny.data.duration_seconds).toBe(30);
  });

  it('tiles: bare 400 for bad z/x/y/format, 404 when the origin has no tile', async () => {
    const bad = [
      '21/0/0',
      '-1/0/0',
      '1/2/0',
      '1/0/2',
      '0/0/0.tiff',
      '0/0/0@4x.png',
      'a/0/0',
      '0/0/0.png.png',
      '3/1/1@2x.',
    ];
    for (const t of bad) {
      const r = await s.get(`/maps/v1/tiles/${t}`, H);
      expect(r.status, t).toBe(400);
      expect(await r.text()).toBe('');
    }
    for (const t of ['0/0/0', '20/1048575/1048575@3x.webp', '5/3/7.jpeg'])
      expect((await s.get(`/maps/v1/tiles/${t}`, H)).status, t).toBe(404);
  });

  it('staticmap: bare 400 for fewer than 2 points or semicolons, bare 502 with no basemap', async () => {
    for (const p of ['', 'path=31.9,35.9', 'path=31.9,35.9;32,36', 'path=a,b,c,d', 'path=31.9,35.9,x,36']) {
      const r = await s.get(`/maps/v1/staticmap?${p}`, H);
      expect(r.status, p).toBe(400);
      expect(await r.text()).toBe('');
    }
    const r = await s.get('/maps/v1/staticmap?path=31.95,35.91,31.99,35.87', H);
    expect(r.status).toBe(502);
    expect(await r.text()).toBe('');
  });
});

describe('directions with an engine', () => {
  let s: TestServer;
  let H: Record<string, string>;
  let sizes: number[][] = [];
  beforeAll(async () => {
    s = await startServer(
      { prefetch: { concurrency: 1, timeout_ms: 60_000 } },
      {
        routing: engine,
        staticMaps: {
          render: async (_p, w, h) => {
            sizes.push([w, h]);
            return Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]);
          },
        },
      },
    );
    H = { 'X-API-Key': s.key().key };
  });
  afterAll(() => s?.close());
  const at = (lat: number) => ({ origin_lat: lat, origin_lng: 35.91, dest_lat: 31.99, dest_lng: 35.87 });

  it('shape 1 carries routes, the primary duplicated, engine, served_at and maneuvers', async () => {
    const r = await (await s.post('/maps/v1/directions', at(31.95), H)).json();
    expect(r.data).toMatchObject({
      distance_meters: 1234,
      duration_seconds: 100,
      source: 'fresh',
      engine: 'svc',
      ownership_tier: 'seed',
    });
    expect(r.data.routes[0].polyline).toBe(r.data.polyline);
    expect(r.data.routes[0].maneuvers[0].type).toBe('depart');
    expect(Date.parse(r.data.served_at)).toBeGreaterThan(0);
  });

  it('422 DIRECTIONS_UNROUTABLE when no route exists; degraded on failure or budget expiry', async () => {
    const u = await s.post('/maps/v1/directions', at(10.5), H);
    expect(u.status).toBe(422);
    expect(await errorCode(u)).toBe('DIRECTIONS_UNROUTABLE');
    const slow = await (await s.post('/maps/v1/directions', { ...at(11.5), max_wait_ms: 150 }, H)).json();
    expect(slow.data).toMatchObject({ partial: true, source: 'server_straight' });
    expect(slow.data.elapsed_ms).toBeGreaterThanOrEqual(140);
    const failed = await (await s.post('/maps/v1/directions', at(12.5), H)).json();
    expect(failed.data.source).toBe('server_straight');
    const multi = await (
      await s.post('/maps/v1/directions', { ...at(31.95), waypoints: [{ lat: 31.97, lng: 35.89 }] }, H)
    ).json();
    expect(multi.data).toMatchObject({ legs: 2, partial: false, source: 'svc_multileg' });
  });

  it('prefetch: queued with the leg count, then prefetch_saturated while the pool is full', async () => {
    const body = { ...at(11.5), waypoints: [{ lat: 31.97, lng: 35.89 }] }; // this engine never answers from 11.5
    const a = await (await s.post('/maps/v1/prefetch-directions', body, H)).json();
    expect(a.data).toEqual({ queued: true, legs: 2 });
    const b = await (await s.post('/maps/v1/prefetch-directions', at(31.95), H)).json();
    expect(b.data).toEqual({ queued: false, reason: 'prefetch_saturated' });
  });

  it('staticmap clamps w and h: defaults 600x260, <= 0 means default, capped at 1024', async () => {
    sizes = [];
    for (const q of ['', '&w=0&h=-5', '&w=5000&h=2000', '&w=300&h=abc']) {
      const r = await s.get(`/maps/v1/staticmap?path=31.95,35.91,31.99,35.87${q}`, H);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/png');
      expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
    }
    expect(sizes).toEqual([
      [600, 260],
      [600, 260],
      [1024, 1024],
      [300, 260],
    ]);
  });
});
