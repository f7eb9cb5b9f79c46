import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { silentLogger } from '../../src/core/log.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { createRoutingEngine } from '../../src/routing/engine-factory.js';
import { INLINE_WARM_UP_SHARE, type PooledRouter } from '../../src/routing/threads/route-pool.js';
import { AnswerCache } from '../../src/cache/answer-cache.js';
import { HotTier } from '../../src/cache/hot-tier.js';
import { isAppError } from '../../src/core/errors.js';
import { isTaskAbandoned, WorkerPool } from '../../src/limits/worker-pool.js';
import { LocalPlaces } from '../../src/places/engine.js';
import { ensurePlacesDb, openPlacesIndex } from '../../src/places/load.js';
import { PhotoSource } from '../../src/places/photos.js';
import { PlacesThreads } from '../../src/places/places-threads.js';
import { search } from '../../src/places/search.js';
import { AnswerCacheRepo } from '../../src/store/answer-cache-repo.js';
import { openDb } from '../../src/store/db.js';
import { PLACES_FILE } from '../../src/store/places/schema.js';
import { errorCode, startServer, storedRouteLegs, type TestServer } from '../helpers/app.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

// Engine work runs in worker threads: a slow route (the router's test hook keeps its thread busy for SLOW_MS
// first, the way a long search does) must not hold up the HTTP thread, max_wait_ms and the query deadline must
// hold, a full queue sheds with DIRECTIONS_BACKPRESSURE, and a requester that goes away frees its thread.
const SLOW_MS = 600;
/**
 * The hook of the engines that show something did NOT wait for a query: far longer than any test's timeout, so an
 * answer that waited for the query would never come. Such a query ends only when it is abandoned (its client goes
 * away, or a deadline passes): the hook checks its cancel word as it goes, as a long search does.
 */
const HELD_MS = 600_000;
/** A query deadline no test reaches (a wait, not a bound), for engines whose tests are not about the deadline. */
const PATIENT_MS = 120_000;
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
  // its thread set up first: a query abandoned while the thread still starts could not stop at a cancel check
  expect(await engine.whenReady()).toBe(true);
  const s = await startServer(
    { data_dir: dir, tiles: { origin: 'xyz', xyz_url: `${originUrl}/{z}/{x}/{y}.png`, store: false } },
    { routing: engine },
  );
  return { s, engine, H: { 'X-API-Key': s.key().key } };
}

/** One thread, a queue of one, routes that hold their thread HELD_MS until abandoned. */
const heldServer = () => slowServer({ threads: 1, queue: 1, timeout_ms: PATIENT_MS }, HELD_MS);

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; v: T }> {
  const t0 = performance.now();
  const v = await f();
  return { ms: performance.now() - t0, v };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `done` until it holds: a wait for something under way, generous so a busy machine never runs out of it. */
async function until(what: string, done: () => boolean, limitMs = 30_000): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > limitMs) throw new Error(`still waiting for ${what}`);
    await sleep(10);
  }
}

/** A request whose client can leave; `settled` tells whether it has been answered (or has failed) yet. */
function leaving(
  url: string,
  init: RequestInit,
): { leave: () => void; answer: Promise<number | string>; settled: () => boolean } {
  const ac = new AbortController();
  let done = false;
  const answer = fetch(url, { ...init, signal: ac.signal })
    .then(
      (r) => r.status,
      (e: Error) => e.name,
    )
    .finally(() => (done = true));
  return { leave: () => ac.abort(), answer, settled: () => done };
}

describe('routing in worker threads', () => {
  let s: TestServer;
  let engine: PooledRouter;
  let H: Record<string, string>;
  beforeAll(async () => {
    ({ s, engine, H } = await slowServer({ threads: 1, queue: 1, timeout_ms: PATIENT_MS }));
    // warm-up: the routing thread has started and answers (slowly); the tile is in the hot tier
    expect((await (await s.post('/maps/v1/directions', body(), H)).json()).data.source).toBe('fresh');
    expect((await s.get('/maps/v1/tiles/3/4/2.png', H)).status).toBe(200);
    // the built-in router's legs are kept in memory only (RoutingEngine.local), never in SQLite
    await sleep(200);
    expect(storedRouteLegs(dir)).toBe(0);
  });
  afterAll(async () => {
    await s?.close();
    engine?.close();
  });
  /** Waits for queries of an earlier test to finish. */
  const idle = () => until('earlier queries to finish', () => engine.stats!.active === 0 && engine.stats!.queued === 0);
  const directions = (on: TestServer, headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
    leaving(`${on.url}/maps/v1/directions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body(extra)),
    });

  it('a slow route does not delay /livez or a hot tile on the HTTP thread', async () => {
    const held = await heldServer();
    try {
      expect((await held.s.get('/maps/v1/tiles/3/4/2.png', held.H)).status).toBe(200); // into the hot tier
      const route = directions(held.s, held.H);
      await until('the route in its thread', () => held.engine.stats!.active === 1);
      for (let i = 0; i < 20; i++) {
        expect((await held.s.get('/livez')).status).toBe(200);
        const tile = await held.s.get('/maps/v1/tiles/3/4/2.png', held.H);
        expect(tile.status).toBe(200);
        expect(tile.headers.get('x-tile-source')).toBe('memory');
      }
      // Every one answered while the route still ran. It holds its thread HELD_MS: a route on the event loop would
      // have held every one of them that long, so none would have been answered within the test.
      expect(route.settled()).toBe(false);
      expect(held.engine.stats).toMatchObject({ active: 1, aborted: 0, expired: 0 });
      route.leave();
      expect(await route.answer).toBe('AbortError');
      await until('the thread to stop', () => held.engine.stats!.active === 0);
      expect(held.engine.stats).toMatchObject({ aborted: 1, replaced: 0 });
    } finally {
      await held.s.close();
      held.engine.close();
    }
  });

  it('max_wait_ms expires on the built-in router: the degraded shape in time', async () => {
    // In time: on routes that hold their thread HELD_MS, the answer comes at max_wait_ms while the query still runs.
    const held = await heldServer();
    try {
      const v = await (await held.s.post('/maps/v1/directions', body({ max_wait_ms: 50 }), held.H)).json();
      expect(v.data).toMatchObject({ partial: true, reason: 'degraded', source: 'server_straight', routes: [] });
      expect(v.data.elapsed_ms).toBeGreaterThanOrEqual(49); // at max_wait_ms, not before
      expect(held.engine.stats).toMatchObject({ active: 1, aborted: 0, expired: 0, completed: 0 });
    } finally {
      await held.s.close();
      held.engine.close();
    }
    // The query goes on in its thread (spec: the gather continues to warm the cache): once it is done, a retry is
    // a hit. max_wait_ms 1 against SLOW_MS: the first answer is the degraded one.
    await idle();
    const completed = engine.stats!.completed;
    const first = await (await s.post('/maps/v1/directions', body({ max_wait_ms: 1 }), H)).json();
    expect(first.data).toMatchObject({ partial: true, reason: 'degraded', source: 'server_straight' });
    await until('the query to finish', () => engine.stats!.completed > completed);
    nth--;
    const again = await (await s.post('/maps/v1/directions', body({ max_wait_ms: 1 }), H)).json();
    expect(again.data.source).toBe('memory');
  });

  it('a full queue answers 503 DIRECTIONS_BACKPRESSURE with Retry-After at once', async () => {
    const held = await heldServer();
    try {
      const running = directions(held.s, held.H); // takes the one thread
      await until('the first route in its thread', () => held.engine.stats!.active === 1);
      const queued = directions(held.s, held.H); // fills the queue of one
      await until('the second route in the queue', () => held.engine.stats!.queued === 1);
      const shed = await held.s.post('/maps/v1/directions', body(), held.H);
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('5');
      expect(await errorCode(shed)).toBe('DIRECTIONS_BACKPRESSURE');
      // At once: answered while the two ahead of it (HELD_MS each) still hold the thread and the queue, both still
      // admitted and waiting for their answers.
      expect([running.settled(), queued.settled()]).toEqual([false, false]);
      expect(held.engine.stats).toMatchObject({ active: 1, queued: 1, shed: 1, aborted: 0, expired: 0 });
      running.leave();
      queued.leave();
      expect(await Promise.all([running.answer, queued.answer])).toEqual(['AbortError', 'AbortError']);
      await until('the thread to stop', () => held.engine.stats!.active + held.engine.stats!.queued === 0);
      expect(held.engine.stats).toMatchObject({ shed: 1, aborted: 2, replaced: 0 });
    } finally {
      await held.s.close();
      held.engine.close();
    }
  });

  it('a client that goes away frees its routing thread: the next route does not wait for the abandoned one', async () => {
    const held = await heldServer();
    try {
      const abandoned = directions(held.s, held.H);
      await until('the route in its thread', () => held.engine.stats!.active === 1);
      abandoned.leave();
      expect(await abandoned.answer).toBe('AbortError');
      // The thread is free again: the query, which would hold it HELD_MS, stopped at its cancel check.
      await until('the thread to stop', () => held.engine.stats!.active === 0);
      expect(held.engine.stats).toMatchObject({ aborted: 1, replaced: 0 }); // no thread had to be killed
      const next = directions(held.s, held.H);
      await until('the next route in the thread', () => held.engine.stats!.active === 1);
      expect(held.engine.stats!.queued).toBe(0); // it did not wait behind the abandoned one
      next.leave();
      expect(await next.answer).toBe('AbortError');
      await until('the thread to stop', () => held.engine.stats!.active === 0);
      expect(held.engine.stats).toMatchObject({ aborted: 2, replaced: 0 });
    } finally {
      await held.s.close();
      held.engine.close();
    }
  });
});

describe('routing deadlines and reload', () => {
  it('a query past routing.timeout_ms is abandoned: the degraded line at the deadline, the thread freed', async () => {
    // The query would hold its thread HELD_MS: answered at all, it was answered at the deadline, not when done.
    const { s, engine, H } = await slowServer({ threads: 1, queue: 4, timeout_ms: 300 }, HELD_MS);
    try {
      const { ms, v } = await timed(async () => (await s.post('/maps/v1/directions', body(), H)).json());
      expect(v.data).toMatchObject({ partial: true, source: 'server_straight' });
      expect(ms).toBeGreaterThanOrEqual(290); // not before the deadline
      // the thread stops at its next cancel check (once it has started, under tsx that takes a moment)
      await until('the thread to stop', () => engine.stats!.active === 0);
      expect(engine.stats).toMatchObject({ active: 0, expired: 1, replaced: 0 });
    } finally {
      await s.close();
      engine.close();
    }
  });

  it('the routing threads warm up before app.loaded settles; the warm-up caches nothing', async () => {
    const d = mkdtempSync(join(tmpdir(), 'svcmaps-engine-warm-'));
    await roadsImporter.run(MONACO_PBF, d, () => undefined, new AbortController().signal);
    // a time bound a busy machine cannot reach: the warm-up runs all its routes (the niced routing threads get a few
    // percent of a core beside other busy processes)
    const s = await startServer(
      { data_dir: d, routing: { threads: 2, warm_routes: 30 } },
      { routingHooks: { warmUpMaxMs: 600_000 } },
    );
    try {
      await s.app.loaded;
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

  it('/readyz says ready once the routing threads are set up, while their warm-up still runs', async () => {
    const d = mkdtempSync(join(tmpdir(), 'svcmaps-engine-warming-'));
    await roadsImporter.run(MONACO_PBF, d, () => undefined, new AbortController().signal);
    // routingHooks: the helper does not await `loaded`, which waits for a warm-up of 100,000 routes (6 s at most)
    const s = await startServer({ data_dir: d, routing: { threads: 2, warm_routes: 100_000 } }, { routingHooks: {} });
    let loaded = false;
    void s.app.loaded.then(() => (loaded = true));
    try {
      for (let r = await s.get('/readyz'); r.status !== 200; r = await s.get('/readyz'))
        await new Promise((res) => setTimeout(res, 20));
      const engine = s.app.services.directions.engine as PooledRouter;
      const before = engine.stats!.completed + engine.stats!.inline!.answered;
      while (engine.stats!.completed + engine.stats!.inline!.answered === before)
        await new Promise((res) => setTimeout(res, 20));
      expect(loaded).toBe(false); // still warming up, and ready
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
    await until('a places thread to start', () => t.ready);
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
      timeoutMs: PATIENT_MS,
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
      await until('one search running, one queued', () => t.stats.active === 1 && t.stats.queued === 1);
      gone.abort();
      for (const e of [await a, await b]) expect(isTaskAbandoned(e) && e.reason).toBe('aborted');
      await until('the thread to stop', () => t.stats.active === 0);
      expect(t.stats).toMatchObject({ active: 0, queued: 0, aborted: 2, replaced: 0 });
    } finally {
      t.close();
      index.close();
    }
  });

  it('a search sent while the places threads still open the index waits for a thread, not the event loop', async () => {
    const threads = new PlacesThreads({ file: join(pdir, PLACES_FILE), threads: 1, queue: 4, timeoutMs: PATIENT_MS });
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
        maxWaitMs: PATIENT_MS, // however long the thread takes to open the index here
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
      timeoutMs: PATIENT_MS,
      testLaterWarmMs: 4000,
    });
    try {
      await waitReady(threads);
      // the second thread is held 4 s after its turn: one answers, the pool is not warm
      expect(threads.warm).toBe(false);
      const input = {
        q: 'Amman',
        bias: { lat: 31.95, lng: 35.93 },
        biasGiven: true,
        country: '',
        locale: 'en' as const,
      };
      expect((await threads.search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE' })).length).toBeGreaterThan(0);
      expect(threads.warm).toBe(false);
      await until('the second thread to take the columns', () => threads.warm);
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

  /** A server whose places engine runs on `threads`, with an answer cache of its own; close() stops all of it. */
  const placesServer = async (threads: PlacesThreads, name: string) => {
    const db = openDb(join(pdir, `answers-${name}.db`));
    const answers = new AnswerCache(new HotTier(16 * 1024 * 1024), new AnswerCacheRepo(db), silentLogger, 0);
    const index = openPlacesIndex(pdir)!;
    const places = new LocalPlaces(index, answers, new PhotoSource(join(pdir, 'photos'), ''), threads);
    const s = await startServer({}, { places });
    const close = async () => {
      await s.close();
      threads.close();
      index.close();
      answers.stop();
      db.close();
    };
    try {
      await waitReady(threads);
    } catch (e) {
      await close();
      throw e;
    }
    return { s, H: { 'X-API-Key': s.key().key }, close };
  };

  it('over HTTP: a slow search leaves /livez alone, max_wait_ms expires in time, a full queue answers 503 with Retry-After', async () => {
    // Searches that hold the one thread HELD_MS: whatever is answered while one runs did not wait for it.
    const held = new PlacesThreads({
      file: join(pdir, PLACES_FILE),
      threads: 1,
      queue: 0,
      timeoutMs: PATIENT_MS,
      testDelayMs: HELD_MS,
    });
    const a = await placesServer(held, 'held');
    try {
      const slow = leaving(`${a.s.url}/maps/v1/autocomplete?q=Amma&lat=31.9&lng=35.9&max_wait_ms=10000`, {
        headers: a.H,
      });
      await until('the search in its thread', () => held.stats.active === 1);
      for (let i = 0; i < 20; i++) expect((await a.s.get('/livez')).status).toBe(200);
      // the one thread is busy and the queue holds none: shed at once
      const shed = await a.s.post('/maps/v1/reverse', { lat: 31.95, lng: 35.93 }, a.H);
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('2');
      expect(await errorCode(shed)).toBe('REVERSE_BACKPRESSURE');
      // all of it answered while the search still ran
      expect(slow.settled()).toBe(false);
      expect(held.stats).toMatchObject({ active: 1, shed: 1, aborted: 0, expired: 0 });
      slow.leave();
      expect(await slow.answer).toBe('AbortError');
      await until('the thread to stop', () => held.stats.active === 0);
      expect(held.stats.aborted).toBe(1);
      // max_wait_ms: budget_expired in time, while the search still runs; it goes on (it is not abandoned)
      const e = await (await a.s.get('/maps/v1/autocomplete?q=Irbi&lat=32.5&lng=35.8&max_wait_ms=200', a.H)).json();
      expect(e.data).toMatchObject({ budget_expired: true, predictions: [] });
      expect(held.stats).toMatchObject({ active: 1, aborted: 1, expired: 0 });
    } finally {
      await a.close();
    }
    // ...and warms the cache: with searches of ten times max_wait_ms, the same search is a hit once it is done.
    const slowThreads = new PlacesThreads({
      file: join(pdir, PLACES_FILE),
      threads: 1,
      queue: 0,
      timeoutMs: PATIENT_MS,
      testDelayMs: 2000,
    });
    const b = await placesServer(slowThreads, 'slow');
    try {
      const path = '/maps/v1/autocomplete?q=Irbi&lat=32.5&lng=35.8&max_wait_ms=200';
      const { ms, v } = await timed(async () => (await b.s.get(path, b.H)).json());
      expect(v.data).toMatchObject({ budget_expired: true, predictions: [] });
      expect(ms).toBeGreaterThanOrEqual(190); // at max_wait_ms, not before
      await until('the search to finish', () => slowThreads.stats.completed === 1);
      const again = await (await b.s.get(path, b.H)).json();
      expect(again.data.budget_expired).toBe(false);
      expect(again.data.source).toBe('memory');
      expect(again.data.predictions.length).toBeGreaterThan(0);
    } finally {
      await b.close();
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
    const pool = onePool('keeper', '../helpers/answer-keeper-worker.ts', 'answer-keeper-worker', 10_000);
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
    const pool = onePool('broken', '../../src/routing/threads/route-pool.ts', 'no-such-worker', 300);
    try {
      // the task is answered (at its 300 ms deadline, or when its thread dies), not held until a thread works
      const e = await pool.run({}).catch((err: unknown) => err);
      expect(isTaskAbandoned(e) && ['deadline', 'crashed'].includes(e.reason)).toBe(true);
      await until('the first replacement', () => pool.stats.replaced >= 1);
      // 1.5 s more: the back-off (0, 400, 800, 1600 ms...) allows a few restarts; a hot loop would make many more
      // (a machine busy with other work only makes fewer)
      await sleep(1500);
      expect(pool.ready).toBe(false);
      expect(pool.stats.replaced).toBeGreaterThanOrEqual(1);
      expect(pool.stats.replaced).toBeLessThanOrEqual(6);
    } finally {
      pool.close();
    }
  });
});
