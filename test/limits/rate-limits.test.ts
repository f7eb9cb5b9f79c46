import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startServer, errorCode, type TestServer } from '../helpers/app.js';
import { SlidingWindowLimiter } from '../../src/limits/sliding-window.js';
import { emptyPlaces } from '../../src/places/empty.js';
import type { PlacesService } from '../../src/places/types.js';

describe('sliding window', () => {
  it('never admits twice the limit across a window boundary', () => {
    const l = new SlidingWindowLimiter(60_000);
    const t0 = 1_000_000 * 60_000; // a window start
    let admitted = 0;
    for (let i = 0; i < 10; i++) if (l.hit('k', 10, t0 + 59_000).allowed) admitted++;
    for (let i = 0; i < 10; i++) if (l.hit('k', 10, t0 + 60_500).allowed) admitted++;
    expect(admitted).toBe(10); // a fixed window would have admitted 20 within 1.5 s
  });

  it('says how long to wait, and that wait is enough', () => {
    const l = new SlidingWindowLimiter(60_000);
    const t0 = 500 * 60_000;
    for (let i = 0; i < 5; i++) expect(l.hit('k', 5, t0 + 1000).allowed).toBe(true);
    const denied = l.hit('k', 5, t0 + 2000);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(l.hit('k', 5, t0 + 2000 + (denied.retryAfterS - 1) * 1000).allowed).toBe(false);
    expect(l.hit('k', 5, t0 + 2000 + denied.retryAfterS * 1000).allowed).toBe(true);
  });

  it('counts callers separately', () => {
    const l = new SlidingWindowLimiter(60_000);
    expect(l.hit('a', 1, 0).allowed).toBe(true);
    expect(l.hit('a', 1, 1).allowed).toBe(false);
    expect(l.hit('b', 1, 1).allowed).toBe(true);
  });

  it('remembers at most maxCallers callers, forgetting the least recent first', () => {
    const l = new SlidingWindowLimiter(60_000, 2);
    expect(l.hit('a', 1, 0).allowed).toBe(true);
    expect(l.hit('b', 1, 0).allowed).toBe(true);
    expect(l.hit('a', 1, 1).allowed).toBe(false); // a is the most recent now
    expect(l.hit('c', 1, 1).allowed).toBe(true); // b is forgotten
    expect(l.hit('a', 1, 2).allowed).toBe(false);
    expect(l.hit('b', 1, 2).allowed).toBe(true); // counted afresh (and c forgotten)
    expect(l.hit('a', 1, 3).allowed).toBe(false);
  });
});

/** Autocomplete that answers only after `release()`: lets a test hold pool slots busy (`held` counts them). */
function slowPlaces() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const state = { held: 0 };
  const places: PlacesService = {
    ...emptyPlaces,
    autocomplete: async (r) => {
      if (r.q === 'slow') {
        state.held++;
        await gate;
      }
      return emptyPlaces.autocomplete(r);
    },
  };
  return { places, release: () => release(), held: () => state.held };
}

describe('limits over HTTP', () => {
  let s: TestServer;
  const slow = slowPlaces();
  beforeAll(async () => {
    s = await startServer(
      { pools: { autocomplete: { concurrency: 1, queue: 0 } } },
      {
        places: slow.places,
        staticMaps: { render: async () => Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') },
      },
    );
  });
  afterAll(() => s?.close());

  it('meters every request, tiles included, to its key in SQLite', async () => {
    const { id, key } = s.key();
    const tokenRes = await fetch(s.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key } });
    const token = ((await tokenRes.json()) as { data: { token: string } }).data.token;
    await s.get('/maps/v1/autocomplete?q=a', { 'X-API-Key': key });
    await s.get('/maps/v1/autocomplete?q=', { 'X-API-Key': key });
    expect((await s.get(`/maps/v1/sprites/x.json?t=${token}`)).status).toBe(200);
    s.app.meter.flush();
    const db = new Database(join(s.dataDir, 'svcmaps.db'), { readonly: true });
    const rows = db.prepare('SELECT bucket, requests, misses FROM usage WHERE key_id = ? ORDER BY bucket').all(id);
    db.close();
    expect(rows).toEqual([
      { bucket: 'gather', requests: 3, misses: 1 },
      { bucket: 'tile_family', requests: 1, misses: 0 },
    ]);
  });

  it('limits each key per minute with 429, Retry-After and RateLimit headers', async () => {
    const { key } = s.key({ perMinute: 3 });
    const other = s.key({ perMinute: 3 });
    const codes: number[] = [];
    let last!: Response;
    for (let i = 0; i < 4; i++) {
      last = await s.get('/maps/v1/autocomplete?q=a', { 'X-API-Key': key });
      codes.push(last.status);
    }
    expect(codes).toEqual([200, 200, 200, 429]);
    expect(await errorCode(last)).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last.headers.get('ratelimit-limit')).toBe('3');
    expect(last.headers.get('ratelimit-remaining')).toBe('0');
    const ok = await s.get('/maps/v1/autocomplete?q=a', { 'X-API-Key': other.key });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('enforces the daily miss quota per bucket with MAPS_QUOTA_EXCEEDED and Retry-After 3600', async () => {
    const { key } = s.key({ daily: 2 });
    expect((await s.get('/maps/v1/autocomplete?q=x', { 'X-API-Key': key })).status).toBe(200);
    expect((await s.get('/maps/v1/autocomplete?q=y', { 'X-API-Key': key })).status).toBe(200);
    // Two misses spent the quota of 2.
    const r = await s.get('/maps/v1/autocomplete?q=z', { 'X-API-Key': key });
    expect(r.status).toBe(429);
    expect(await errorCode(r)).toBe('MAPS_QUOTA_EXCEEDED');
    expect(r.headers.get('retry-after')).toBe('3600');
    // The tiles bucket (staticmap) is counted separately.
    const sm = await s.get('/maps/v1/staticmap?path=31.95,35.91,31.96,35.92', { 'X-API-Key': key });
    expect(sm.status).toBe(200);
  });

  it('caps the tile family per IP before auth', async () => {
    const capped = await startServer({ limits: { tile_ip_per_minute: 5 } });
    const statuses: number[] = [];
    let last!: Response;
    for (let i = 0; i < 6; i++) {
      last = await capped.get('/maps/v1/tiles/0/0/0.png'); // anonymous: the cap runs first
      statuses.push(last.status);
    }
    await capped.close();
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await errorCode(last)).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('sheds load with AUTOCOMPLETE_BACKPRESSURE (Retry-After 3) when the pool is full', async () => {
    const { key } = s.key();
    const held = s.get('/maps/v1/autocomplete?q=slow', { 'X-API-Key': key });
    // the held search has the pool's one slot (a wait, as long as the machine needs)
    for (let i = 0; i < 3000 && slow.held() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(slow.held()).toBe(1);
    const shed = await s.get('/maps/v1/autocomplete?q=fast', { 'X-API-Key': key });
    expect(shed.status).toBe(503);
    expect(await errorCode(shed)).toBe('AUTOCOMPLETE_BACKPRESSURE');
    expect(shed.headers.get('retry-after')).toBe('3');
    slow.release();
    expect((await held).status).toBe(200);
  });
});
