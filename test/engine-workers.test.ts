import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../src/config/defaults.js';
import { silentLogger } from '../src/core/log.js';
import { roadsImporter } from '../src/import/roads-importer.js';
import { createRoutingEngine } from '../src/routing/engine-factory.js';
import { INLINE_WARM_UP_SHARE, type PooledRouter } from '../src/routing/route-pool.js';
import { AnswerCache } from '../src/cache/answer-cache.js';
import { HotTier } from '../src/cache/hot-tier.js';
import { isAppError } from '../src/core/errors.js';
import { isTaskAbandoned, WorkerPool } from '../src/limits/worker-pool.js';
import { LocalPlaces } from '../src/places/engine.js';
import { ensurePlacesDb, openPlacesIndex } from '../src/places/load.js';
import { PhotoSource } from '../src/places/photos.js';
import { PlacesThreads } from '../src/places/places-threads.js';
import { search } from '../src/places/search.js';
import { AnswerCacheRepo } from '../src/store/answer-cache-repo.js';
import { openDb } from '../src/store/db.js';
import { PLACES_FILE } from '../src/store/places/schema.js';
import { errorCode, startServer, storedRouteLegs, type TestServer } from './helpers/app.js';
import { MONACO_PBF } from './helpers/fixtures.js';

// Engine work runs in worker threads: a slow route (the router's test hook keeps its thread busy for SLOW_MS
// first, the way a long search does) must not hold up the HTTP thread, max_wait_ms and the query deadline must
// hold, a full queue sheds with DIRECTIONS_BACKPRESSURE, and a requester that goes away frees its thread.
const SLOW_MS = 600;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

let dir: string;
let origin: Server;
let originUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svcmaps-engine-workers-'));
  await roadsImporter.run(MONACO_PBF, dir, () => undefined, new AbortController().signal);
  // A tile origin for the hot-tile path: one PNG for every tile (the first fetch warms the hot tier).
  origin = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG));
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}, 60_000);

afterAll(() => {
  origin?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Distinct destinations along a Monaco street, so no request is a cache hit of another. */
const from = { lat: 43.7384, lng: 7.4246 };
let nth = 0;
const next = () => ({ lat: 43.745 + (nth++ % 40) * 0.0001, lng: 7.433 });
const body = (extra: Record<string, unknown> = {}) => {
  const to = next();
  return { origin_lat: from.lat, origin_lng: from.lng, dest_lat: to.lat, dest_lng: to.lng, ...extra };
};

async function slowServer(routing: Partial<typeof DEFAULTS.routing>, delayMs = SLOW_MS) {
  const engine = createRoutingEngine({ ...DEFAULTS.routing, ...routing }, dir, silentLogger, {
    testDelayMs: delayMs,
  }) as PooledRouter;
  const s = await startServer(
    { data_dir: dir, tiles: { origin: 'xyz', xyz_url: `${originUrl}/{z}/{x}/{y}.png`, store: false } },
    { routing: engine },
  );
  return { s, engine, H: { 'X-API-Key': s.key().key } };
}

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; v: T }> {
  const t0 = performance.now();
  const v = await f();
  return { ms: performance.now() - t0, v };
}

describe('routing in worker threads', () => {
  let s: TestServer;
  let engine: PooledRouter;
  let H: Record<string, string>;
  beforeAll(async () => {
    ({ s, engine, H } = await slowServer({ threads: 1, queue: 1 }));
    // warm-up: the routing thread has started and answers (slowly); the tile is in the hot tier
    expect((await (await s.post('/maps/v1/directions', body(), H)).json()).data.source).toBe('fresh');
    expect((await s.get('/maps/v1/tiles/3/4/2.png', H)).status).toBe(200);
    // the built-in router's legs are kept in memory only (RoutingEngine.local), never in SQLite
    await new Promise((r) => setTimeout(r, 200));
    expect(storedRouteLegs(dir)).toBe(0);
  });
  afterAll(async () => {
    await s?.close();
    engine?.close();
  });
  /** Waits for queries of an earlier test (a max_wait_ms query goes on in the background) to finish. */
  const idle = async () => {
    for (let i = 0; i < 200 && (engine.stats!.active > 0 || engine.stats!.queued > 0); i++)
      await new Promise((r) => setTimeout(r, 20));
  };

  it('a slow route does not delay /livez or a hot tile on the HTTP thread', async () => {
    const route = timed(async () => (await s.post('/maps/v1/directions', body(), H)).json());
    const livez: number[] = [];
    const tile: number[] = [];
    const until = performance.now() + SLOW_MS - 150;
    await new Promise((r) => setTimeout(r, 20)); // the route is in its thread
    while (performance.now() < until) {
      const a = await timed(() => s.get('/livez'));
      expect(a.v.status).toBe(200);
      livez.push(a.ms);
      const b = await timed(() => s.get('/maps/v1/tiles/3/4/2.png', H));
      expect(b.v.status).toBe(200);
      expect(b.v.headers.get('x-tile-source')).toBe('memory');
      tile.push(b.ms);
    }
    const r = await route;
    expect(r.v.data.source).toBe('fresh');
    expect(r.ms).toBeGreaterThanOrEqual(SLOW_MS);
    expect(livez.length).toBeGreaterThan(10);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    // Answered while the route was running: a few ms each (the client runs in this process too; on a machine shared
    // with other work the scheduler adds some), never held up for the route (a route on the event loop would hold
    // every one of them for up to SLOW_MS).
    const seen = `livez ${livez.map(Math.round).join(' ')} | tile ${tile.map(Math.round).join(' ')}`;
    expect(median(livez), seen).toBeLessThan(15);
    expect(median(tile), seen).toBeLessThan(15);
    expect(Math.max(...livez, ...tile), seen).toBeLessThan(SLOW_MS / 2);
  });

  it('max_wait_ms expires on the built-in router: the degraded shape in time', async () => {
    const { ms, v } = await timed(async () =>
      (await s.post('/maps/v1/directions', body({ max_wait_ms: 50 }), H)).json(),
    );
    expect(v.data).toMatchObject({ partial: true, reason: 'degraded', source: 'server_straight', routes: [] });
    expect(v.data.elapsed_ms).toBeGreaterThanOrEqual(49);
    // 50 ms + 10 ms on an idle machine; the slack above covers timer lateness when other work shares the cores
    expect(v.data.elapsed_ms).toBeLessThanOrEqual(80);
    expect(ms).toBeLessThan(120);
    // the query goes on in its thread (spec: the gather continues to warm the cache): a retry is a hit
    await new Promise((r) => setTimeout(r, SLOW_MS + 100));
    nth--;
    const again = await (await s.post('/maps/v1/directions', body({ max_wait_ms: 50 }), H)).json();
    expect(again.data.source).toBe('memory');
  });

  it('a full queue answers 503 DIRECTIONS_BACKPRESSURE with Retry-After at once', async () => {
    await idle();
    const running = s.post('/maps/v1/directions', body(), H); // takes the one thread
    await new Promise((r) => setTimeout(r, 30));
    const queued = s.post('/maps/v1/directions', body(), H); // fills the queue of one
    await new Promise((r) => setTimeout(r, 30));
    const shed = await timed(() => s.post('/maps/v1/directions', body(), H));
    expect(shed.v.status).toBe(503);
    expect(shed.v.headers.get('retry-after')).toBe('5');
    expect(await errorCode(shed.v)).toBe('DIRECTIONS_BACKPRESSURE');
    expect(shed.ms).toBeLessThan(100);
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
    expect(engine.stats?.shed).toBeGreaterThanOrEqual(1);
  });

  it('a client that goes away frees its routing thread: the next route does not wait for the abandoned one', async () => {
    await idle();
    const before = engine.stats!.aborted;
    const gone = new AbortController();
    const abandoned = fetch(`${s.url}/maps/v1/directions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...H },
      body: JSON.stringify(body()),
      signal: gone.signal,
    }).catch(() => 'aborted');
    await new Promise((r) => setTimeout(r, 100));
    gone.abort();
    expect(await abandoned).toBe('aborted');
    await new Promise((r) => setTimeout(r, 30));
    const r = await timed(async () => (await s.post('/maps/v1/directions', body(), H)).json());
    expect(r.v.data.source).toBe('fresh');
    expect(r.ms).toBeLessThan(SLOW_MS + 250); // not SLOW_MS more for the abandoned query
    expect(engine.stats!.aborted).toBe(before + 1);
    expect(engine.stats!.replaced).toBe(0); // it stopped at its cancel check; no thread had to be killed
  });
});

describe('routing deadlines and reload', () => {
  it('a query past routing.timeout_ms is abandoned: the degraded line at the deadline, the thread freed', async () => {
    const { s, engine, H } = await slowServer({ threads: 1, queue: 4, timeout_ms: 300 }, 2000);
    try {
      const { ms, v } = await timed(async () => (await s.post('/maps/v1/directions', body(), H)).json());
      expect(v.data).toMatchObject({ partial: true, source: 'server_straight' });
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(1500); // includes the thread's start-up; far from the 2 s the query would take
      // the thread stops at its next cancel check (once it has started, under tsx that takes a moment)
      for (let i = 0; i < 100 && engine.stats!.active > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(engine.stats).toMatchObject({ active: 0, expired: 1, replaced: 0 });
    } finally {
      await s.close();
      engine.close();
    }
  });

  it('the routing threads warm up before the server says ready; the warm-up caches nothing', async () => {
    const d = mkdtempSync(join(tmpdir(), 'svcmaps-engine-warm-'));
    await roadsImporter.run(MONACO_PBF, d, () => undefined, new AbortController().signal);
    const s = await startServer({ data_dir: d, routing: { threads: 2, warm_routes: 30 } }); // awaits `loaded`
    try {
      const engine = s.app.services.directions.engine as PooledRouter;
      // local warm-up routes run on the HTTP thread, as a quiet server's would (route-inline.ts), and then 2-5 km
      // routes there alone, so that its routing code is optimised too
      const st = engine.stats!;
      expect(st).toMatchObject({ active: 0 });
      expect(st.completed + st.inline!.answered).toBe(30 + Math.round(30 * INLINE_WARM_UP_SHARE));
      expect(st.completed).toBeGreaterThan(0);
      expect(st.inline!.answered).toBeGreaterThan(0);
      expect((await s.get('/readyz')).status).toBe(200);
      expect(s.app.services.hotTier().answers.entries).toBe(0);
      const H = { 'X-API-Key': s.key().key };
      expect((await (await s.post('/maps/v1/directions', body(), H)).json()).data).toMatchObject({ source: 'fresh' });
    } finally {
      await s.close();
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('reload swaps a new graph into the running routing threads', async () => {
    const d = mkdtempSync(join(tmpdir(), 'svcmaps-engine-reload-'));
    const s = await startServer({ data_dir: d, routing: { threads: 2 } });
    try {
      const H = { 'X-API-Key': s.key().key };
      await roadsImporter.run(MONACO_PBF, d, () => undefined, new AbortController().signal);
      await s.app.reload();
      const engine = s.app.services.directions.engine as PooledRouter;
      const v1 = engine.version;
      expect((await (await s.post('/maps/v1/directions', body(), H)).json()).data.source).toBe('fresh');
      await roadsImporter.run(MONACO_PBF, d, () => undefined, new AbortController().signal);
      expect((await s.app.reload()).find((r) => r.name === 'roads')).toMatchObject({ ok: true });
      expect(s.app.services.directions.engine).toBe(engine); // same threads, new graph
      expect(engine.version).not.toBe(v1);
      expect(engine.stats?.size).toBe(2);
      const after = await (await s.post('/maps/v1/directions', body(), H)).json();
      expect(after.data).toMatchObject({ source: 'fresh', engine: 'svc' });
      expect(after.data.routes[0].maneuvers.length).toBeGreaterThan(1);
      (s.app.services.directions.engine as PooledRouter).close();
    } finally {
      await s.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('places in worker threads', () => {
  let pdir: string;
  const waitReady = async (t: PlacesThreads) => {
    for (let i = 0; i < 500 && !t.ready; i++) await new Promise((r) => setTimeout(r, 20));
    expect(t.ready).toBe(true);
  };
  beforeAll(async () => {
    pdir = mkdtempSync(join(tmpdir(), 'svcmaps-places-workers-'));
    await ensurePlacesDb(pdir);
  }, 60_000);
  afterAll(() => rmSync(pdir, { recursive: true, force: true }));

  it('a places thread answers what the in-process search answers; a full queue sheds with the capability code', async () => {
    const t = new PlacesThreads({
      file: join(pdir, PLACES_FILE),
      threads: 1,
      queue: 1,
      timeoutMs: 5000,
      testDelayMs: 300,
    });
    const index = openPlacesIndex(pdir)!;
    try {
      await waitReady(t);
      const input = {
        q: 'Amman',
        bias: { lat: 31.95, lng: 35.93 },
        biasGiven: true,
        country: 'jo',
        locale: 'en' as const,
      };
      const running = t.search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE' });
      const queued = t.reverse({ lat: 31.95, lng: 35.93 }, 'en', { shedCode: 'REVERSE_BACKPRESSURE' });
      const shed = await t.search(input, { shedCode: 'GEOCODE_BACKPRESSURE' }).catch((e: unknown) => e);
      expect(isAppError(shed) && shed.code).toBe('GEOCODE_BACKPRESSURE');
      expect(await running).toEqual(search(index, input));
      expect((await queued).formatted_address).toBeTruthy();
      // a requester that goes away: its queued query is dropped, its running one abandoned at the next check
      const gone = new AbortController();
      const a = t
        .search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE', signal: gone.signal })
        .catch((e: unknown) => e);
      const b = t
        .search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE', signal: gone.signal })
        .catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 50));
      gone.abort();
      for (const e of [await a, await b]) expect(isTaskAbandoned(e) && e.reason).toBe('aborted');
      for (let i = 0; i < 50 && t.stats.active > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(t.stats).toMatchObject({ active: 0, queued: 0, aborted: 2, replaced: 0 });
    } finally {
      t.close();
      index.close();
    }
  });

  it('a search sent while the places threads still open the index waits for a thread, not the event loop', async () => {
    const threads = new PlacesThreads({ file: join(pdir, PLACES_FILE), threads: 1, queue: 4, timeoutMs: 5000 });
    const db = openDb(join(pdir, 'answers-starting.db'));
    const answers = new AnswerCache(new HotTier(16 * 1024 * 1024), new AnswerCacheRepo(db), silentLogger, 0);
    const index = openPlacesIndex(pdir)!;
    const places = new LocalPlaces(index, answers, new PhotoSource(join(pdir, 'photos'), ''), threads);
    try {
      expect(threads.ready).toBe(false);
      expect(threads.starting).toBe(true);
      const a = await places.autocomplete({
        q: 'Amman',
        bias: { lat: 31.95, lng: 35.93 },
        biasGiven: true,
        country: 'jo',
        locale: 'en',
        maxWaitMs: 4000,
      });
      expect(a.predictions.length).toBeGreaterThan(0);
      expect(threads.stats.completed).toBe(1); // answered by the thread
    } finally {
      threads.close();
      index.close();
      db.close();
    }
  });

  it('scoring columns read by one connection serve another on the same file, and no other file', () => {
    const a = openPlacesIndex(pdir)!,
      b = openPlacesIndex(pdir)!;
    try {
      const cols = a.warm().sharedColumns;
      expect(cols.lat.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(b.useColumns({ ...cols, size: cols.size + 1 })).toBe(false);
      expect(b.useColumns({ ...cols, generation: 'another import' })).toBe(false);
      expect(b.useColumns(cols)).toBe(true);
      for (const id of [1, Math.floor(a.count / 2), a.count]) {
        expect(b.names(id)).toEqual(a.names(id));
        expect([b.lat[id], b.countryOf(id), b.kindOf(id)]).toEqual([a.lat[id], a.countryOf(id), a.kindOf(id)]);
        expect(b.names(id).join('|').length).toBeGreaterThan(0);
      }
    } finally {
      a.close();
      b.close();
    }
  });

  it('warm only once every thread has loaded its columns; the first answers meanwhile', async () => {
    const threads = new PlacesThreads({
      file: join(pdir, PLACES_FILE),
      threads: 2,
      queue: 4,
      timeoutMs: 5000,
      testLaterWarmMs: 4000,
    });
    try {
      await waitReady(threads);
      // the second thread is held 4 s after its turn: one answers, the pool is not warm
      expect(threads.warm).toBe(false);
      const input = { q: 'Amman', bias: { lat: 31.95, lng: 35.93 }, biasGiven: true, locale: 'en' as const };
      expect((await threads.search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE' })).length).toBeGreaterThan(0);
      expect(threads.warm).toBe(false);
      for (let i = 0; i < 1000 && !threads.warm; i++) await new Promise((r) => setTimeout(r, 20));
      expect(threads.warm).toBe(true);
      // the second thread took the columns the first read (shared memory): two searches at once, one on each
      // thread, answer as the in-process search does
      const index = openPlacesIndex(pdir)!;
      const both = await Promise.all(
        [0, 1].map(() => threads.search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE' })),
      );
      expect(threads.stats.completed).toBe(3);
      expect(both).toEqual([search(index, input), search(index, input)]);
      index.close();
    } finally {
      threads.close();
    }
  });

  it('over HTTP: a slow search leaves /livez alone, max_wait_ms expires in time, a full queue answers 503 with Retry-After', async () => {
    const threads = new PlacesThreads({
      file: join(pdir, PLACES_FILE),
      threads: 1,
      queue: 0,
      timeoutMs: 5000,
      testDelayMs: 500,
    });
    const db = openDb(join(pdir, 'answers-test.db'));
    const answers = new AnswerCache(new HotTier(16 * 1024 * 1024), new AnswerCacheRepo(db), silentLogger, 0);
    const index = openPlacesIndex(pdir)!;
    const places = new LocalPlaces(index, answers, new PhotoSource(join(pdir, 'photos'), ''), threads);
    const s = await startServer({}, { places });
    try {
      await waitReady(threads);
      const H = { 'X-API-Key': s.key().key };
      const slow = timed(async () => (await s.get('/maps/v1/autocomplete?q=Amma&lat=31.9&lng=35.9', H)).json());
      await new Promise((r) => setTimeout(r, 30));
      const livez: number[] = [];
      for (let i = 0; i < 20; i++) livez.push((await timed(() => s.get('/livez'))).ms);
      // the one thread is busy and the queue holds none: shed at once
      const shed = await timed(() => s.post('/maps/v1/reverse', { lat: 31.95, lng: 35.93 }, H));
      expect(shed.v.status).toBe(503);
      expect(shed.v.headers.get('retry-after')).toBe('2');
      expect(await errorCode(shed.v)).toBe('REVERSE_BACKPRESSURE');
      const r = await slow;
      expect(r.v.data.predictions.length).toBeGreaterThan(0);
      expect(r.ms).toBeGreaterThanOrEqual(500);
      expect(Math.max(...livez), livez.map(Math.round).join(' ')).toBeLessThan(250);
      // max_wait_ms: budget_expired in time, the search goes on and warms the cache
      const e = await timed(async () =>
        (await s.get('/maps/v1/autocomplete?q=Irbi&lat=32.5&lng=35.8&max_wait_ms=200', H)).json(),
      );
      expect(e.v.data).toMatchObject({ budget_expired: true, predictions: [] });
      expect(e.ms).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 500));
      const again = await (await s.get('/maps/v1/autocomplete?q=Irbi&lat=32.5&lng=35.8&max_wait_ms=200', H)).json();
      expect(again.data.budget_expired).toBe(false);
      expect(again.data.source).toBe('memory');
    } finally {
      await s.close();
      threads.close();
      index.close();
      answers.stop();
      db.close();
    }
  });
});

describe('engine pool', () => {
  /** One thread running `module` (beside the file `here` names), for tests of the pool itself. */
  const onePool = (name: string, here: string, module: string, timeoutMs: number) =>
    new WorkerPool({
      name,
      here: new URL(here, import.meta.url).href,
      module,
      size: 1,
      queue: 4,
      shedCode: 'DIRECTIONS_BACKPRESSURE',
      timeoutMs,
      init: {},
    });

  // A moved ArrayBuffer is detached, and V8 then compiles every typed-array access of that thread with a detached
  // check (routes x1.12 slower): answers must be copied to the pool's thread, leaving the engine's memory alone.
  it('copies answers to the pool thread, never detaching a buffer of the engine thread', async () => {
    const pool = onePool('keeper', './helpers/answer-keeper-worker.ts', 'answer-keeper-worker', 10_000);
    try {
      const first = await pool.run<{ keptBytes: number; bytes: Uint8Array }>({});
      expect(first.keptBytes).toBe(-1);
      expect(first.bytes.byteLength).toBe(64 * 1024);
      expect(first.bytes[100]).toBe(7);
      const second = await pool.run<{ keptBytes: number }>({});
      expect(second.keptBytes).toBe(64 * 1024); // still the thread's own, not detached by the first answer
    } finally {
      pool.close();
    }
  });

  it('a thread that dies before it is set up is replaced after a growing back-off, not in a hot loop', async () => {
    const pool = onePool('broken', '../src/routing/route-pool.ts', 'no-such-worker', 300);
    try {
      const t0 = performance.now();
      const e = await pool.run({}).catch((err: unknown) => err);
      expect(isTaskAbandoned(e) && ['deadline', 'crashed'].includes(e.reason)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 1500));
      expect(pool.ready).toBe(false);
      expect(pool.stats.replaced).toBeGreaterThanOrEqual(1);
      expect(pool.stats.replaced).toBeLessThanOrEqual(6);
    } finally {
      pool.close();
    }
  });
});
