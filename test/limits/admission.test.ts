import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startServer, type TestServer } from '../helpers/app.js';
import { bytesOf, tileToken } from '../helpers/tiles.js';
import { Admission, AdmissionRefused } from '../../src/limits/admission.js';
import { admissionBudgets } from '../../src/tiles/factory.js';
import { configWith } from '../../src/config/load.js';
import type { AdmittedStaticMaps } from '../../src/tiles/staticmap.js';
import type { TieredTileService } from '../../src/tiles/tiered.js';
import type { TileOrigin } from '../../src/tiles/origins/types.js';
import { RenderOrigin } from '../../src/tiles/origins/render.js';
import { RenderPool } from '../../src/render/worker-pool.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tile and request timeouts of the servers whose tests are not about them: waits, never reached when all is well. */
const PATIENT_MS = 120_000;

/** A path over a fresh area (each i elsewhere on the globe), spanning ~0.2 degrees: about 5x5 cold tiles at 1024 px. */
const freshPath = (i: number) => {
  const lat = -50 + ((i * 7.3) % 100);
  const lng = -170 + ((i * 13.7) % 340);
  return `${lat.toFixed(4)},${lng.toFixed(4)},${(lat + 0.15).toFixed(4)},${(lng + 0.2).toFixed(4)}`;
};

/** Answers in the order they arrived: `order` of an answer is its place in that sequence (1, 2, ...). */
let answers = 0;

/**
 * Sends one request and reports its status, Retry-After, body size, its place among the answers of this file and how
 * long it took (printed only: latency is measured by `npm run bench:overload`, not asserted here).
 */
async function timed(s: TestServer, path: string, headers: Record<string, string> = {}) {
  const t0 = performance.now();
  const r = await s.get(path, headers);
  const body = await bytesOf(r);
  return {
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    source: r.headers.get('x-tile-source'),
    bytes: body.length,
    order: ++answers,
    ms: performance.now() - t0,
  };
}

/** Polls `done` until it holds (a wait for something under way, generous so a busy machine never runs out of it). */
async function until(what: string, done: () => boolean, limitMs = 20_000): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > limitMs) throw new Error(`still waiting for ${what}`);
    await sleep(5);
  }
}

describe('admission control (unit)', () => {
  // Job times here are the test's own sleeps on a fake clock (performance.now and timers): the moving average, the
  // predictions and the deadlines see exactly the times the test gives them, however busy the machine is.
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const lanes = { interactive: { queue: 4, waitMs: 1000 }, batch: { queue: 4, waitMs: 1000 } };
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };
  /** Runs jobs that each take `ms` on the fake clock, `together` at a time, `times` rounds. */
  const teach = async (a: Admission, ms: number, times: number, together = 1) => {
    for (let i = 0; i < times; i++) {
      const jobs = Array.from({ length: together }, () => a.run('batch', () => sleep(ms)));
      await vi.advanceTimersByTimeAsync(ms);
      await Promise.all(jobs);
    }
  };
  /** How `p` stands once the callbacks already due have run, the clock not moved: 'pending', or how it settled. */
  const now = async (p: Promise<unknown>) => {
    let state: { settled: 'pending' | 'resolved' | 'rejected'; value?: unknown } = { settled: 'pending' };
    p.then(
      (value) => (state = { settled: 'resolved', value }),
      (value: unknown) => (state = { settled: 'rejected', value }),
    );
    await vi.advanceTimersByTimeAsync(0);
    return state;
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

  it("keeps reserved slots for interactive work: a person's tile starts at once beside a batch backlog", async () => {
    const a = new Admission('t', { concurrency: 2, reserved: 1, lanes });
    const g = gate();
    const batch = [a.run('batch', () => g.p), a.run('batch', async () => 'second')];
    expect([a.active, a.queued('batch')]).toEqual([1, 1]); // batch holds one slot at most
    let ran = false;
    const person = a.run('interactive', async () => void (ran = true));
    expect(a.active).toBe(2);
    await person;
    expect(ran).toBe(true);
    expect(a.queued('batch')).toBe(1); // still waiting for the batch slot
    g.open();
    expect(await Promise.all(batch)).toEqual([undefined, 'second']);
  });

  it('tells what run() would refuse without queuing anything', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 1, waitMs: 1000 } } });
    expect(a.wouldRefuse('batch')).toBeUndefined(); // a free slot
    const g = gate();
    const running = a.run('batch', () => g.p);
    expect(a.wouldRefuse('batch')).toBeUndefined(); // room in the queue
    const queued = a.run('batch', async () => 0);
    expect(a.wouldRefuse('batch')).toMatchObject({ reason: 'full', retryAfterS: 1 });
    expect(a.wouldRefuse('interactive')).toBeUndefined(); // no such lane: nothing to refuse for it here
    expect([a.active, a.queued()]).toEqual([1, 1]); // asking queued nothing
    g.open();
    await Promise.all([running, queued]);
  });

  it('refuses at once when a lane is full, or when the predicted wait exceeds the budget', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 10, waitMs: 400 } } });
    // Teach it that a job takes 150 ms (the first job per slot is not sampled: it pays start-up costs).
    await teach(a, 150, 4);
    expect(a.averageMs).toBe(150);
    const g = gate();
    const running = a.run('batch', () => g.p);
    // Waits predicted 150 and 300 ms fit the 400 ms budget; a third in line (450 ms) is refused at once: settled
    // before the clock moved, while the job ahead still holds the slot and the two before it still wait.
    const queued = [a.run('batch', async () => 1), a.run('batch', async () => 2)];
    const t0 = performance.now();
    const late = await now(a.run('batch', async () => 3));
    expect(late).toMatchObject({ settled: 'rejected', value: { reason: 'late' } });
    expect(performance.now()).toBe(t0);
    expect([a.active, a.queued('batch')]).toEqual([1, 2]);
    expect(a.stats.batch).toMatchObject({ late: 1, expired: 0 });
    const tight = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 1, waitMs: 1000 } } });
    const g2 = gate();
    const r2 = tight.run('batch', () => g2.p);
    const q2 = tight.run('batch', async () => 0);
    expect(await now(tight.run('batch', async () => 0))).toMatchObject({
      settled: 'rejected',
      value: { reason: 'full' },
    });
    g.open();
    g2.open();
    expect(await Promise.all([running, ...queued, r2, q2])).toEqual([undefined, 1, 2, undefined, 0]);
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
    // Answered at its deadline, not when a slot frees: the slot stays taken throughout.
    await vi.advanceTimersByTimeAsync(99);
    expect((await now(late)).settled).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await now(late)).toMatchObject({ settled: 'rejected', value: { reason: 'expired' } });
    await expect(late).rejects.toBeInstanceOf(AdmissionRefused);
    expect(a.active).toBe(1);
    g.open();
    await running;
    await vi.advanceTimersByTimeAsync(10);
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
    await teach(a, 20, 5); // the first is not sampled (start-up)
    expect(a.averageMs).toBe(20);
    await teach(a, 400, 1); // one outlier: the median of the last three is still a fast job
    expect(a.averageMs).toBe(20);
    await teach(a, 400, 2); // jobs became slow (a burst): the average follows at once
    expect(a.averageMs).toBeGreaterThan(180);
  });

  it('predicts from the running jobs while every slot has been busy longer than the average', async () => {
    const a = new Admission('t', { concurrency: 1, lanes: { batch: { queue: 10, waitMs: 60_000 } } });
    await teach(a, 10, 4);
    const g = gate();
    const running = a.run('batch', () => g.p);
    const queued = a.run('batch', async () => 0);
    await vi.advanceTimersByTimeAsync(300);
    // No job finished since the burst began; the average alone (10 ms) would still describe the time before it.
    expect(a.averageMs).toBe(10);
    expect(a.serviceMs()).toBe(300);
    expect(a.predictedWaitMs('batch')).toBe(2 * 300);
    g.open();
    await Promise.all([running, queued]);
  });

  it('Retry-After of a refusal is the time the work ahead needs, whole seconds in [1, 30], growing with the backlog', async () => {
    const a = new Admission('t', { concurrency: 2, lanes: { batch: { queue: 1000, waitMs: 600_000 } } });
    // Teach it 100 ms a job (two slots: the first two are not sampled).
    await teach(a, 100, 4, 2);
    expect(a.averageMs).toBeCloseTo(100, 3); // two starts at one instant are kept a nanosecond apart
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
    expect(auto.tiles.reserved).toBe(1); // of the default 4 render slots, one never goes to batch work
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
    // A tiny budget: one static map at a time, two may wait (each at most 3 s). A tile may take as long as it
    // needs: render threads yield the CPU to other work, and on a busy machine their start-up alone takes seconds.
    s = await startServer({
      admission: { staticmap: { concurrency: 1, queue: 2, wait_ms: 3000 } },
      tiles: { timeout_ms: PATIENT_MS },
      http: { request_timeout_ms: PATIENT_MS },
    });
    H = { 'X-API-Key': s.key({ perMinute: 100_000 }).key };
    t = await tileToken(s);
    // Start both render threads (one tile each) so the first map's time is not thread start-up.
    for (const r of await Promise.all([1, 2].map((x) => timed(s, `/maps/v1/tiles/2/${x}/1.png?t=${t}`))))
      expect(r.status).toBe(200);
  }, 120_000);
  afterAll(() => s?.close());

  const maps = () => s.app.services.staticMaps as AdmittedStaticMaps;
  const tiles = () => s.app.services.tiles as TieredTileService;

  it('a burst of static maps: the budget renders, the rest get a fast bare 503 with Retry-After', async () => {
    const started = maps().started;
    const before = { ...maps().admission.stats.batch };
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
    }
    // Fast: refused at admission (a full queue, or a predicted wait over the budget), never queued first; only a map
    // that waited past wait_ms could be refused later. Those refused at once were all answered before the first map
    // was drawn: they did not wait for the work they were refused in favour of.
    const after = maps().admission.stats.batch;
    const atOnce = after.full + after.late - before.full - before.late;
    expect(atOnce + after.expired - before.expired).toBe(refused.length);
    expect(atOnce).toBeGreaterThanOrEqual(21);
    const firstDrawn = Math.min(...ok.map((r) => r.order));
    expect(refused.filter((r) => r.order < firstDrawn).length).toBeGreaterThanOrEqual(atOnce);
    expect(maps().started - started).toBe(ok.length);
  }, 120_000);

  it('a map that admission would refuse is refused on arrival, before its credentials are checked', async () => {
    const g = maps().admission;
    const burst = Promise.all(
      Array.from({ length: 6 }, (_, i) => timed(s, `/maps/v1/staticmap?path=${freshPath(100 + i)}&w=1024&h=1024`, H)),
    );
    // Wait until one map draws and admission refuses more (its queue full, or the predicted wait past the budget).
    while (!(g.active === 1 && g.wouldRefuse('batch'))) await new Promise((r) => setTimeout(r, 5));
    const refusals = () => g.stats.batch.full + g.stats.batch.late;
    const before = refusals();
    const bogus = await timed(s, `/maps/v1/staticmap?path=${freshPath(200)}`, { 'X-API-Key': 'not-a-key' });
    expect(bogus.status).toBe(503); // not 401: a refusal costs no key lookup
    expect(bogus.retryAfter).toMatch(/^[1-9]\d*$/);
    expect(refusals()).toBe(before + 1);
    await burst;
    // With room again, the same request meets its credentials check.
    expect((await timed(s, `/maps/v1/staticmap?path=${freshPath(201)}`, { 'X-API-Key': 'not-a-key' })).status).toBe(
      401,
    );
  }, 120_000);

  it('cold tiles requested during a static-map burst answer 200 (interactive before batch)', async () => {
    // Its own server with room for a real batch backlog: 8 maps drawing (~25 basemap tiles each), 8 waiting.
    // A cold tile waits as long as it needs for a render slot (the test is about whom the slots go to).
    const b = await startServer({
      admission: { staticmap: { concurrency: 8, queue: 8 }, interactive: { queue: 0, wait_ms: PATIENT_MS } },
      tiles: { timeout_ms: PATIENT_MS },
      http: { request_timeout_ms: PATIENT_MS },
    });
    try {
      const key = { 'X-API-Key': b.key({ perMinute: 100_000 }).key };
      const tok = await tileToken(b);
      for (const r of await Promise.all([1, 2].map((x) => timed(b, `/maps/v1/tiles/2/${x}/1.png?t=${tok}`))))
        expect(r.status).toBe(200);
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
  }, 240_000);

  it('a cold tile refused under a backlog gets a bare 503 whose Retry-After grows with the backlog', async () => {
    // A slow origin (100 ms a tile), one render slot, no stored tiles (so no stand-in): the backlog is the queue.
    // While the burst comes in, the origin also holds every tile until both refusals are in, so the queue cannot
    // drain and let in one the burst meant to refuse, however slowly the requests arrive.
    let hold = Promise.resolve();
    const slow: TileOrigin = {
      name: 'slow',
      fetch: async () => (await sleep(100), await hold, PNG_1x1),
    };
    const refusedUnder = async (backlog: number) => {
      const b = await startServer(
        {
          tiles: { concurrency: 1, store: false, timeout_ms: 30_000 },
          // a wait budget no prediction reaches while the origin holds the running tile: refusals are a full queue
          admission: { interactive: { queue: backlog, wait_ms: 600_000 } },
        },
        { tileOrigin: slow },
      );
      try {
        const tok = await tileToken(b);
        for (let i = 0; i < 4; i++) expect((await timed(b, `/maps/v1/tiles/14/${i}/7.png?t=${tok}`)).status).toBe(200);
        const admission = (b.app.services.tiles as TieredTileService).admission;
        const refusedBefore = admission.stats.interactive.full + admission.stats.interactive.late;
        let release!: () => void;
        hold = new Promise<void>((r) => (release = r));
        const pending = Promise.all(
          Array.from({ length: backlog + 3 }, (_, i) => timed(b, `/maps/v1/tiles/14/${100 + i}/9.png?t=${tok}`)),
        );
        const { interactive } = admission.stats;
        await until('both refusals', () => interactive.full + interactive.late - refusedBefore >= 2);
        release();
        const burst = await pending;
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
  }, 120_000);

  it('a static map whose client went away while it waited is never rendered', async () => {
    const before = maps().started;
    const gone = maps().admission.stats.batch.gone;
    const first = timed(s, `/maps/v1/staticmap?path=${freshPath(200)}&w=1024&h=1024`, H);
    await until('the first map to start', () => maps().started - before === 1);
    const ac = new AbortController();
    const second = fetch(`${s.url}/maps/v1/staticmap?path=${freshPath(201)}&w=1024&h=1024`, {
      headers: H,
      signal: ac.signal,
    }).catch((e: Error) => e.name);
    await until('the second map to wait', () => maps().admission.queued() === 1);
    ac.abort();
    expect(await second).toBe('AbortError');
    await until('the server to see the second client leave', () => maps().admission.stats.batch.gone - gone === 1);
    expect((await first).status).toBe(200);
    expect(maps().admission.queued()).toBe(0);
    expect(maps().started - before).toBe(1);
    expect(maps().admission.stats.batch.gone - gone).toBe(1);
  }, 120_000);

  it('a cold tile whose client went away while queued is never rendered', async () => {
    const admission = tiles().admission;
    // Fill the render slots and the queue with a static map's basemap tiles, and the slot kept for interactive work
    // with two other cold tiles (one drawing, one waiting); then ask for a cold tile and leave.
    const map = timed(s, `/maps/v1/staticmap?path=${freshPath(300)}&w=1024&h=1024`, H);
    while (admission.queued() === 0) await sleep(2);
    const others = [1, 2].map((i) => timed(s, `/maps/v1/tiles/15/${17100 + i}/11000.png?t=${t}`));
    while (admission.queued('interactive') === 0) await sleep(2);
    const gone = admission.stats.interactive.gone;
    const ac = new AbortController();
    const left = fetch(`${s.url}/maps/v1/tiles/15/17000/11000.png?t=${t}`, { signal: ac.signal }).catch(
      (e: Error) => e.name,
    );
    await sleep(5);
    ac.abort();
    expect(await left).toBe('AbortError');
    await Promise.all([map, ...others]);
    await until('the server to see the client leave', () => admission.stats.interactive.gone - gone >= 1);
    expect(admission.stats.interactive.gone - gone).toBe(1);
    // Never rendered, so never stored: asked again, it is drawn now.
    expect((await timed(s, `/maps/v1/tiles/15/17000/11000.png?t=${t}`)).source).toBe('fresh');
  }, 120_000);

  it('a cold tile aborted after admission: its render is dropped if its thread has not begun it, and not awaited if it has', async () => {
    // One render thread that holds each render HOLD_MS (test hook) before drawing it, two origin calls admitted at
    // once: the second tile waits on the thread behind the first. A render the thread has begun cannot be called
    // back, so the test waits for each hold to end; every check made while a hold lasts is an ordering (the slot
    // was freed, the request ended) seen within a few ms of its cause, far inside the hold.
    const HOLD_MS = 2000;
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-render-abort-'));
    const pool = new RenderPool(1, dir, { testDelayMs: HOLD_MS });
    const b = await startServer(
      { data_dir: dir, tiles: { concurrency: 2, store: false, timeout_ms: PATIENT_MS } },
      { tileOrigin: new RenderOrigin(pool) },
    );
    try {
      const tok = await tileToken(b);
      const tiles = b.app.services.tiles as TieredTileService;
      const admission = tiles.admission;
      const base = pool.stats;
      const leaving = (url: string) => {
        const ac = new AbortController();
        const answer = fetch(url, { signal: ac.signal }).catch((e: Error) => e.name);
        return { leave: () => ac.abort(), answer };
      };
      // First drawn, second queued on the thread; the second's client leaves while it waits there.
      const first = timed(b, `/maps/v1/tiles/14/9001/6001.png?t=${tok}`);
      await until('the first render on its thread', () => pool.stats.active - base.active === 1);
      const second = leaving(`${b.url}/maps/v1/tiles/14/9002/6002.png?t=${tok}`);
      await until('the second render queued behind it', () => pool.stats.active - base.active === 2);
      expect(admission.active).toBe(2);
      second.leave();
      expect(await second.answer).toBe('AbortError');
      // Its admission slot is free while the first is still held: nothing awaits the dropped render.
      await until('the second slot to be freed', () => admission.active === 1);
      expect(pool.stats.active - base.active).toBe(2);
      expect(pool.stats.aborted).toBe(base.aborted + 1);
      expect((await first).status).toBe(200);
      await until('the thread to finish', () => pool.stats.active === 0);
      expect(pool.stats).toMatchObject({
        active: 0,
        skipped: base.skipped + 1, // never drawn
        completed: base.completed + 1, // only the first
        aborted: base.aborted + 1,
      });
      // A tile whose client leaves while its thread draws it: the request ends at once, the slot is freed, and the
      // draw finishes unawaited (its bytes are discarded). The idle thread takes the render as soon as it is sent;
      // the client leaves a tenth of the hold later, and the request has ended while the draw still goes on.
      const third = leaving(`${b.url}/maps/v1/tiles/14/9003/6003.png?t=${tok}`);
      await until('the third render on its thread', () => pool.stats.active === 1);
      await sleep(HOLD_MS / 10);
      third.leave();
      expect(await third.answer).toBe('AbortError');
      await until('the third slot to be freed', () => admission.active === 0);
      await until('the request to end', () => b.app.requests.inflight === 0);
      expect(pool.stats.active).toBe(1); // the thread still draws it
      expect(pool.stats.aborted).toBe(base.aborted + 2);
      await until('the thread to finish', () => pool.stats.active === 0);
      expect(pool.stats).toMatchObject({ skipped: base.skipped + 1, completed: base.completed + 2 });
      expect(b.app.requests.inflight).toBe(0);
      // Never stored: neither is in memory (the only tier here), so asked again, both would be drawn now.
      for (const y of [6002, 6003]) expect(tiles.isHot({ z: 14, x: y + 3000, y, scale: 1, format: 'png' })).toBe(false);
      expect(tiles.isHot({ z: 14, x: 9001, y: 6001, scale: 1, format: 'png' })).toBe(true);
    } finally {
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
