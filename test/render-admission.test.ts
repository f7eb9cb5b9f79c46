import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/app.js';
import { bytesOf, tileToken } from './helpers/tiles.js';
import { Admission, AdmissionRefused } from '../src/limits/admission.js';
import { admissionBudgets } from '../src/tiles/factory.js';
import { configWith } from '../src/config/load.js';
import type { AdmittedStaticMaps } from '../src/tiles/staticmap.js';
import type { TieredTileService } from '../src/tiles/tiered.js';
import type { TileOrigin } from '../src/tiles/origins/types.js';
import { RenderOrigin } from '../src/tiles/origins/render.js';
import { RenderPool } from '../src/render/worker-pool.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A path over a fresh area (each i elsewhere on the globe), spanning ~0.2 degrees: about 5x5 cold tiles at 1024 px. */
const freshPath = (i: number) => {
  const lat = -50 + ((i * 7.3) % 100);
  const lng = -170 + ((i * 13.7) % 340);
  return `${lat.toFixed(4)},${lng.toFixed(4)},${(lat + 0.15).toFixed(4)},${(lng + 0.2).toFixed(4)}`;
};

/** Sends one request and reports its status, Retry-After, body size and how long the answer took. */
async function timed(s: TestServer, path: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await s.get(path, headers);
  const body = await bytesOf(r);
  return {
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    source: r.headers.get('x-tile-source'),
    bytes: body.length,
    ms: performance.now() - t0,
  };
}

describe('admission control (unit)', () => {
  const lanes = { interactive: { queue: 4, waitMs: 1000 }, batch: { queue: 4, waitMs: 1000 } };
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };

  it('runs interactive work ahead of queued batch work', async () => {
    const a = new Admission('t', { concurrency: 1, lanes });
    const g = gate();
    const order: string[] = [];
    const first = a.run('batch', () => g.p);
    const jobs = [
      a.run('batch', async () => void order.push('b1')),
      a.run('batch', async () => void order.push('b2')),
      a.run('interactive', async () => void order.push('i1')),
    ];
    g.open();
    await Promise.all([first, ...jobs]);
    expect(order).toEqual(['i1', 'b1', 'b2']);
  });

  it('refuses at once when a lane is full, or when the predicted wait exceeds the budget', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 10, waitMs: 400 } } });
    // Teach it that a job takes ~150 ms (the first job per slot is not sampled: it pays start-up costs).
    for (let i = 0; i < 4; i++) await a.run('batch', () => sleep(150));
    expect(a.averageMs).toBeGreaterThan(140);
    const g = gate();
    const running = a.run('batch', () => g.p);
    // Waits predicted ~150 and ~300 ms fit the 400 ms budget; a third in line (~450 ms) is refused at once.
    const queued = [a.run('batch', async () => 1), a.run('batch', async () => 2)];
    const t0 = performance.now();
    await expect(a.run('batch', async () => 3)).rejects.toMatchObject({ reason: 'late' });
    expect(performance.now() - t0).toBeLessThan(20);
    const tight = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 1, waitMs: 1000 } } });
    const g2 = gate();
    const r2 = tight.run('batch', () => g2.p);
    const q2 = tight.run('batch', async () => 0);
    await expect(tight.run('batch', async () => 0)).rejects.toMatchObject({ reason: 'full' });
    g.open();
    g2.open();
    await Promise.all([running, ...queued, r2, q2]);
  });

  it('drops queued work whose deadline passed or whose requester went away; it is never run', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 10, waitMs: 100 } } });
    const g = gate();
    let ran = 0;
    const running = a.run('batch', () => g.p);
    const ac = new AbortController();
    const gone = a.run('batch', async () => void ran++, { signal: ac.signal });
    const late = a.run('batch', async () => void ran++);
    ac.abort();
    await expect(gone).rejects.toMatchObject({ reason: 'gone' });
    const t0 = performance.now();
    await expect(late).rejects.toBeInstanceOf(AdmissionRefused);
    expect(performance.now() - t0).toBeLessThan(250); // answered at its deadline, not when a slot frees
    g.open();
    await running;
    await sleep(10);
    expect(ran).toBe(0);
    expect(a.stats.batch).toMatchObject({ started: 1, gone: 1, expired: 1 });
  });

  it('a queued batch job can be promoted ahead of the batch backlog', async () => {
    const a = new Admission('t', { concurrency: 1, lanes });
    const g = gate();
    const order: string[] = [];
    const first = a.run('batch', () => g.p);
    const ticket: { promote?: () => void } = {};
    const jobs = [
      a.run('batch', async () => void order.push('b1')),
      a.run('batch', async () => void order.push('b2'), { ticket }),
    ];
    ticket.promote!();
    g.open();
    await Promise.all([first, ...jobs]);
    expect(order).toEqual(['b2', 'b1']);
  });

  it('the job-time average follows a lasting change within a few completions and ignores a single outlier', async () => {
    const a = new Admission('t', { concurrency: 1, lanes });
    const job = (ms: number) => a.run('batch', () => sleep(ms));
    for (let i = 0; i < 5; i++) await job(20); // the first is not sampled (start-up)
    expect(a.averageMs).toBeGreaterThan(15);
    expect(a.averageMs).toBeLessThan(60);
    await job(400); // one outlier: the median of the last three is still a fast job
    expect(a.averageMs).toBeLessThan(60);
    await job(400);
    await job(400); // jobs became slow (a burst): the average follows at once
    expect(a.averageMs).toBeGreaterThan(180);
  });

  it('predicts from the running jobs while every slot has been busy longer than the average', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 10, waitMs: 60_000 } } });
    for (let i = 0; i < 4; i++) await a.run('batch', () => sleep(10));
    const g = gate();
    const running = a.run('batch', () => g.p);
    const queued = a.run('batch', async () => 0);
    await sleep(300);
    // No job finished since the burst began; the average alone (~10 ms) would still describe the time before it.
    expect(a.averageMs).toBeLessThan(50);
    expect(a.serviceMs()).toBeGreaterThanOrEqual(290);
    expect(a.predictedWaitMs('batch')).toBeGreaterThanOrEqual(2 * 290);
    g.open();
    await Promise.all([running, queued]);
  });

  it('Retry-After of a refusal is the time the work ahead needs, whole seconds in [1, 30], growing with the backlog', async () => {
    const a = new Admission('t', { concurrency: 2, lanes: { batch: { queue: 1000, waitMs: 600_000 } } });
    // Teach it ~100 ms a job (two slots: the first two are not sampled).
    for (let i = 0; i < 4; i++) await Promise.all([a.run('batch', () => sleep(100)), a.run('batch', () => sleep(100))]);
    expect(a.averageMs).toBeGreaterThan(90);
    const g = gate();
    const held = [a.run('batch', () => g.p), a.run('batch', () => g.p)];
    const waiting: Array<Promise<unknown>> = [];
    const seen: number[] = [];
    for (const backlog of [0, 10, 50, 150, 900]) {
      while (waiting.length < backlog) waiting.push(a.run('batch', async () => 0));
      seen.push(a.retryAfterS('batch'));
    }
    const avg = a.averageMs;
    expect(seen.every((v) => Number.isInteger(v))).toBe(true);
    expect(seen[0]).toBe(1);
    expect(seen[1]).toBe(Math.max(1, Math.ceil((11 * avg) / 2 / 1000)));
    expect(seen[2]).toBe(Math.ceil((51 * avg) / 2 / 1000));
    expect(seen[3]).toBeGreaterThan(seen[2]!);
    expect(seen[4]).toBe(30);
    // The refusal carries it.
    const full = new Admission('f', { concurrency: 1, lanes: { batch: { queue: 1, waitMs: 1000 } } });
    const g2 = gate();
    const r2 = [full.run('batch', () => g2.p), full.run('batch', async () => 0)];
    const refused = await full.run('batch', async () => 0).catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: 'full', retryAfterS: 1 });
    g.open();
    g2.open();
    await Promise.all([...held, ...waiting, ...r2]);
  });

  it('budgets are sized from the machine unless configured', () => {
    const auto = admissionBudgets(configWith({}), 2);
    expect(auto.staticmap).toEqual({ concurrency: 4, queue: 16, waitMs: 5000 });
    expect(auto.tiles.interactive).toEqual({ queue: 2048, waitMs: 5000 });
    expect(auto.tiles.batch).toEqual({ queue: 512, waitMs: 4000 });
    const set = admissionBudgets(
      configWith({ admission: { staticmap: { concurrency: 3, queue: 5, wait_ms: 700 } } }),
      16,
    );
    expect(set.staticmap).toEqual({ concurrency: 3, queue: 5, waitMs: 700 });
    expect(() => configWith({ admission: { staticmap: { queue: -1 } } })).toThrow(/admission.staticmap.queue/);
    expect(() => configWith({ admission: { batch: { size: 3 } } })).toThrow(/size/);
  });
});

describe('admission control on the real app', () => {
  let s: TestServer;
  let H: Record<string, string>;
  let t: string;
  beforeAll(async () => {
    // A tiny budget: one static map at a time, two may wait (each at most 3 s).
    s = await startServer({ admission: { staticmap: { concurrency: 1, queue: 2, wait_ms: 3000 } } });
    H = { 'X-API-Key': s.key({ perMinute: 100_000 }).key };
    t = await tileToken(s);
    // Warm the render threads so the first map's time is not thread start-up.
    expect((await timed(s, `/maps/v1/tiles/2/1/1.png?t=${t}`)).status).toBe(200);
  });
  afterAll(() => s?.close());

  const maps = () => s.app.services.staticMaps as AdmittedStaticMaps;
  const tiles = () => s.app.services.tiles as TieredTileService;

  it('a burst of static maps: the budget renders, the rest get a fast bare 503 with Retry-After', async () => {
    const started = maps().started;
    const burst = await Promise.all(
      Array.from({ length: 24 }, (_, i) => timed(s, `/maps/v1/staticmap?path=${freshPath(i)}&w=1024&h=1024`, H)),
    );
    const ok = burst.filter((r) => r.status === 200);
    const refused = burst.filter((r) => r.status === 503);
    expect(ok.length + refused.length).toBe(24);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(3); // one running, two waiting
    expect(refused.length).toBeGreaterThanOrEqual(21);
    for (const r of refused) {
      // The maps ahead of it (one drawing, two waiting) times the recent map time, in whole seconds.
      expect(r.retryAfter).toMatch(/^[1-9]\d*$/);
      expect(r.bytes).toBe(0); // bare status, like the endpoint's other errors
      expect(r.ms).toBeLessThan(250);
    }
    expect(maps().started - started).toBe(ok.length);
  }, 30_000);

  it('cold tiles requested during a static-map burst answer 200 (interactive before batch)', async () => {
    // Its own server with room for a real batch backlog: 8 maps drawing (~25 basemap tiles each), 8 waiting.
    const b = await startServer({ admission: { staticmap: { concurrency: 8, queue: 8 } } });
    try {
      const key = { 'X-API-Key': b.key({ perMinute: 100_000 }).key };
      const tok = await tileToken(b);
      expect((await timed(b, `/maps/v1/tiles/2/1/1.png?t=${tok}`)).status).toBe(200);
      const admission = (b.app.services.tiles as TieredTileService).admission;
      const burst = Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          timed(b, `/maps/v1/staticmap?path=${freshPath(100 + i)}&w=1024&h=1024`, key),
        ),
      );
      while (admission.queued('batch') < 100) await sleep(2);
      const backlog = admission.queued('batch');
      const cold = await Promise.all(
        Array.from({ length: 30 }, (_, i) => timed(b, `/maps/v1/tiles/14/${8000 + i}/${5000 + (i % 3)}.png?t=${tok}`)),
      );
      const ok = cold.filter((r) => r.status === 200);
      const slowest = Math.max(...cold.map((r) => r.ms));
      console.log(
        `cold tiles behind ${backlog} queued batch tiles: ${ok.length}/30 ok, slowest ${slowest.toFixed(0)} ms`,
      );
      expect(ok.length).toBe(30);
      expect(cold.every((r) => r.source === 'fresh')).toBe(true);
      // Still a backlog when the last cold tile was answered: they went ahead of it, not after it.
      expect(admission.queued('batch')).toBeGreaterThan(0);
      const maps = await burst;
      expect(maps.every((r) => r.status === 200 || r.status === 503)).toBe(true);
    } finally {
      await b.close();
    }
  }, 30_000);

  it('a cold tile refused under a backlog gets a bare 503 whose Retry-After grows with the backlog', async () => {
    // A slow origin (100 ms a tile), one render slot, no stored tiles (so no stand-in): the backlog is the queue.
    const slow: TileOrigin = {
      name: 'slow',
      fetch: async () => (await sleep(100), PNG_1x1),
    };
    const refusedUnder = async (backlog: number) => {
      const b = await startServer(
        {
          tiles: { concurrency: 1, store: false, timeout_ms: 30_000 },
          admission: { interactive: { queue: backlog, wait_ms: 30_000 } },
        },
        { tileOrigin: slow },
      );
      try {
        const tok = await tileToken(b);
        for (let i = 0; i < 4; i++) expect((await timed(b, `/maps/v1/tiles/14/${i}/7.png?t=${tok}`)).status).toBe(200);
        const burst = await Promise.all(
          Array.from({ length: backlog + 3 }, (_, i) => timed(b, `/maps/v1/tiles/14/${100 + i}/9.png?t=${tok}`)),
        );
        const refused = burst.filter((r) => r.status === 503);
        expect(burst.filter((r) => r.status === 200)).toHaveLength(backlog + 1);
        expect(refused).toHaveLength(2);
        for (const r of refused) {
          expect(r.bytes).toBe(0);
          expect(r.retryAfter).toMatch(/^[1-9]\d*$/);
        }
        return Number(refused[0]!.retryAfter);
      } finally {
        await b.close();
      }
    };
    const small = await refusedUnder(4); // 5 x ~100 ms ahead: 1 s
    const large = await refusedUnder(40); // 41 x ~100 ms ahead: 5 s
    console.log(`Retry-After behind 4 queued tiles: ${small} s, behind 40: ${large} s`);
    expect(small).toBeGreaterThanOrEqual(1);
    expect(large).toBeGreaterThanOrEqual(4);
    expect(large).toBeGreaterThan(small);
  }, 60_000);

  it('a static map whose client went away while it waited is never rendered', async () => {
    const before = maps().started;
    const gone = maps().admission.stats.batch.gone;
    const first = timed(s, `/maps/v1/staticmap?path=${freshPath(200)}&w=1024&h=1024`, H);
    await sleep(20);
    const ac = new AbortController();
    const second = fetch(`${s.url}/maps/v1/staticmap?path=${freshPath(201)}&w=1024&h=1024`, {
      headers: H,
      signal: ac.signal,
    }).catch((e: Error) => e.name);
    await sleep(50);
    ac.abort();
    expect(await second).toBe('AbortError');
    expect((await first).status).toBe(200);
    await sleep(200);
    expect(maps().started - before).toBe(1);
    expect(maps().admission.stats.batch.gone - gone).toBe(1);
  }, 30_000);

  it('a cold tile whose client went away while queued is never rendered', async () => {
    const admission = tiles().admission;
    // Fill the render slots and the queue with a static map's basemap tiles, then ask for a cold tile and leave.
    const map = timed(s, `/maps/v1/staticmap?path=${freshPath(300)}&w=1024&h=1024`, H);
    while (admission.queued() === 0) await sleep(2);
    const gone = admission.stats.interactive.gone;
    const ac = new AbortController();
    const left = fetch(`${s.url}/maps/v1/tiles/15/17000/11000.png?t=${t}`, { signal: ac.signal }).catch(
      (e: Error) => e.name,
    );
    await sleep(5);
    ac.abort();
    expect(await left).toBe('AbortError');
    await map;
    await sleep(100);
    expect(admission.stats.interactive.gone - gone).toBe(1);
    // Never rendered, so never stored: asked again, it is drawn now.
    expect((await timed(s, `/maps/v1/tiles/15/17000/11000.png?t=${t}`)).source).toBe('fresh');
  }, 30_000);

  it('a cold tile aborted after admission: its render is dropped if its thread has not begun it, and not awaited if it has', async () => {
    // One render thread that holds each render 800 ms (test hook), two origin calls admitted at once: the second
    // tile waits on the thread behind the first.
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-render-abort-'));
    const pool = new RenderPool(1, dir, { testDelayMs: 800 });
    const b = await startServer(
      { data_dir: dir, tiles: { concurrency: 2, store: false } },
      { tileOrigin: new RenderOrigin(pool) },
    );
    try {
      const tok = await tileToken(b);
      const admission = (b.app.services.tiles as TieredTileService).admission;
      expect((await timed(b, `/maps/v1/tiles/3/1/1.png?t=${tok}`)).status).toBe(200); // thread start-up
      const base = pool.stats;
      const aborted = (url: string, afterMs: number) => {
        const ac = new AbortController();
        setTimeout(() => ac.abort(), afterMs);
        return fetch(url, { signal: ac.signal }).catch((e: Error) => e.name);
      };
      // First drawn, second queued on the thread; the second's client leaves while it waits there.
      const first = timed(b, `/maps/v1/tiles/14/9001/6001.png?t=${tok}`);
      const second = aborted(`${b.url}/maps/v1/tiles/14/9002/6002.png?t=${tok}`, 200);
      await sleep(100);
      expect(admission.active).toBe(2);
      expect(pool.stats.active - base.active).toBe(2);
      expect(await second).toBe('AbortError');
      await sleep(50);
      expect(admission.active).toBe(1); // its admission slot is free: nothing awaits the dropped render
      expect((await first).status).toBe(200);
      for (let i = 0; i < 100 && pool.stats.active > 0; i++) await sleep(20);
      expect(pool.stats).toMatchObject({
        active: 0,
        skipped: base.skipped + 1, // never drawn
        completed: base.completed + 1, // only the first
        aborted: base.aborted + 1,
      });
      // A tile whose client leaves while its thread draws it: the request ends at once, the slot is freed, and the
      // draw finishes unawaited (its bytes are discarded).
      const t0 = performance.now();
      const third = aborted(`${b.url}/maps/v1/tiles/14/9003/6003.png?t=${tok}`, 200);
      expect(await third).toBe('AbortError');
      await sleep(50);
      expect(performance.now() - t0).toBeLessThan(700);
      expect(admission.active).toBe(0);
      expect(pool.stats.active).toBe(1); // the thread still draws it
      for (let i = 0; i < 100 && pool.stats.active > 0; i++) await sleep(20);
      expect(pool.stats).toMatchObject({ skipped: base.skipped + 1, completed: base.completed + 2 });
      expect(b.app.requests.inflight).toBe(0);
      // Never stored: asked again, both are drawn now.
      for (const y of [6002, 6003])
        expect((await timed(b, `/maps/v1/tiles/14/${y + 3000}/${y}.png?t=${tok}`)).source).toBe('fresh');
    } finally {
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
