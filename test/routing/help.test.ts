import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import type { FoundRoute } from '../../src/routing/query/chains.js';
import { GRAPH_FILE, loadGraph } from '../../src/routing/graph.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import { maneuvers } from '../../src/routing/answer/maneuvers.js';
import type { RoutePath } from '../../src/routing/query/path.js';
import { HelpDesk, helpWords, pathsShared, WORDS, type HelpInit } from '../../src/routing/threads/route-help.js';
import { PooledRouter } from '../../src/routing/threads/route-pool.js';
import { encodeLeg, pathRecord } from '../../src/routing/answer/route-record.js';
import { LIECHTENSTEIN_PBF } from '../helpers/fixtures.js';

/**
 * Routing threads writing paths of each other's answers (route-help.ts), on the Liechtenstein import: the answer is
 * the same bytes whoever wrote which path, a claim the helper has not taken up is revoked and written by the asker,
 * and an asker whose helper never answers writes the path itself instead of hanging.
 */
describe('routing threads sharing an answer', () => {
  let dir: string;
  let g: RoadGraph;
  let engine: BuiltinEngine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-route-help-'));
    await roadsImporter.run(LIECHTENSTEIN_PBF, dir, () => {}, new AbortController().signal);
    g = loadGraph(join(dir, GRAPH_FILE), { shared: true });
    engine = new BuiltinEngine(g, { snapMaxMeters: 1500 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Pairs of points where the route has two alternatives. */
  const PAIRS = [
    [47.157, 9.5081, 47.2175, 9.5237],
    [47.1648, 9.5196, 47.2108, 9.517],
    [47.2129, 9.5183, 47.1845, 9.5479],
    [47.1115, 9.5381, 47.1523, 9.4992],
    [47.177, 9.5462, 47.2282, 9.5175],
    [47.2521, 9.5737, 47.2165, 9.5233],
    [47.2176, 9.5679, 47.2123, 9.5145],
    [47.1747, 9.5404, 47.2277, 9.5481],
    [47.2113, 9.5231, 47.2238, 9.5084],
    [47.2295, 9.5477, 47.1866, 9.5459],
    [47.1647, 9.5121, 47.249, 9.5676],
    [47.1485, 9.5146, 47.1168, 9.5471],
  ];
  const pairs = (count: number) =>
    PAIRS.slice(0, count).map(([a, b, c, d]) => [
      { lat: a!, lng: b! },
      { lat: c!, lng: d! },
    ]);
  const opts = { alternatives: 2, locale: 'en' as const, overview: 'simplified' as const };

  it('a pool whose threads write each other paths answers the bytes one thread writes alone', async () => {
    const pool = new PooledRouter(g, {
      snapMaxMeters: 1500,
      threads: 2,
      queue: 8,
      timeoutMs: 10_000,
      testHandOverMinPieces: 0, // every path, however short, is offered
    });
    try {
      await pool.whenWarm(); // a thread still starting is not asked to help
      let alternatives = 0;
      for (const [a, b] of [...pairs(12), ...pairs(12)]) {
        const here = engine.routeSync(a!, b!, opts);
        const there = await pool.route(a!, b!, { ...opts, locale: 'en' });
        expect(here.kind).toBe('ok');
        if (here.kind !== 'ok' || there.kind !== 'ok') throw new Error('unroutable');
        alternatives += here.paths.length - 1;
        expect(there.encoded!.equals(encodeLeg(engine.name, here.paths))).toBe(true);
      }
      // The idle thread took up some of the paths offered (the primary of each route, the first alternative of
      // those with two). How many depends on how soon it wakes: a job it has not taken up when the asker is done
      // with its own paths is revoked (the desk tests below go through each case).
      expect(alternatives).toBe(48);
      expect(pool.stats!.helped).toBeGreaterThan(0);
      // two queries at once: each thread runs its own, and answers its own bytes
      const two = pairs(2);
      const both = await Promise.all(two.map(([a, b]) => pool.route(a!, b!, opts)));
      for (const [k, r] of both.entries()) {
        const here = engine.routeSync(two[k]![0]!, two[k]![1]!, opts);
        if (r.kind !== 'ok' || here.kind !== 'ok') throw new Error('unroutable');
        expect(r.encoded!.equals(encodeLeg(engine.name, here.paths))).toBe(true);
      }
    } finally {
      pool.close();
    }
  });

  it('a warm-up runs its routes in the threads, stops at its time bound or on close, and changes no answer', async () => {
    const pool = new PooledRouter(g, {
      snapMaxMeters: 1500,
      threads: 2,
      queue: 8,
      timeoutMs: 10_000,
      testHandOverMinPieces: 0,
    });
    try {
      await pool.whenWarm();
      const first = await pool.warmUp(40, 600_000); // a bound a busy machine cannot reach: all 40 run
      expect(first).toMatchObject({ routes: 40, failed: 0 });
      expect(pool.stats).toMatchObject({ completed: 40, active: 0, queued: 0 });
      // its second half runs one query at a time: the idle thread lends a hand, so that code warms up too
      // (a hand is lent when the idle thread wakes in time: on a busy machine it may take more rounds to see one)
      for (let round = 0; round < 20 && !pool.stats!.helped; round++) await pool.warmUp(40, 600_000);
      expect(pool.stats!.helped).toBeGreaterThan(0);
      // stopped at its time bound with the routes under way, far short of what it was asked
      const bounded = await pool.warmUp(1_000_000, 100);
      expect(bounded.routes).toBeGreaterThan(0);
      expect(bounded.routes).toBeLessThan(1_000_000);
      expect(pool.stats!.completed).toBeGreaterThan(40);
      for (const [a, b] of pairs(4)) {
        const here = engine.routeSync(a!, b!, opts);
        const there = await pool.route(a!, b!, opts);
        if (here.kind !== 'ok' || there.kind !== 'ok') throw new Error('unroutable');
        expect(there.encoded!.equals(encodeLeg(engine.name, here.paths))).toBe(true);
      }
      // closing the engine ends a warm-up that had a minute to go
      const running = pool.warmUp(1_000_000, 60_000);
      setTimeout(() => pool.close(), 50);
      expect((await running).routes).toBeLessThan(1_000_000);
    } finally {
      pool.close();
    }
  });

  it('a real query during the warm-up cancels the warm-up queries under way and answers as it would alone', async () => {
    // Every query first keeps its thread busy for a minute (abandonable): a real query that waited behind a
    // warm-up query would not be answered within the test's timeout.
    const slow = new PooledRouter(g, {
      snapMaxMeters: 1500,
      threads: 2,
      queue: 8,
      timeoutMs: 120_000,
      testDelayMs: 60_000,
    });
    const quick = new PooledRouter(g, { snapMaxMeters: 1500, threads: 2, queue: 8, timeoutMs: 10_000 });
    try {
      await slow.whenWarm();
      const warming = slow.warmUp(1_000_000, 60_000);
      while (slow.stats!.active < 2) await new Promise((r) => setTimeout(r, 5));
      const [a, b] = pairs(1)[0]!;
      const real = slow.route(a!, b!, opts);
      // the warm-up queries in both threads were cancelled for it, and no new one started while it ran
      expect(slow.stats).toMatchObject({ aborted: 2 });
      // once the threads stopped, the real query runs in one of them and the other stays idle
      while (!(slow.stats!.active === 1 && slow.stats!.queued === 0)) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50));
      expect(slow.stats).toMatchObject({ active: 1, queued: 0 });
      slow.close(); // the real query itself is slowed by the hook: closing ends it and the warm-up
      await expect(real).rejects.toThrow(/abandoned/);
      const report = await warming;
      expect(report.failed).toBeGreaterThanOrEqual(2);
      expect(report.lastError).toMatch(/abandoned/);
      // with no hook, a real query beside a running warm-up gets exactly the answer it gets alone
      await quick.whenWarm();
      const alone = await quick.route(a!, b!, opts);
      const beside = quick.warmUp(1_000_000, 60_000);
      const during = await quick.route(a!, b!, opts);
      quick.close();
      await beside;
      if (alone.kind !== 'ok' || during.kind !== 'ok') throw new Error('unroutable');
      expect(during.encoded!.equals(alone.encoded!)).toBe(true);
    } finally {
      slow.close();
      quick.close();
    }
  });

  describe('the desk', () => {
    let init: HelpInit;
    let asker: HelpDesk;
    let helper: HelpDesk;
    let path: RoutePath;
    let alone: Buffer;
    beforeAll(() => {
      const [a, b] = pairs(1)[0]!;
      path = engine.paths(a!, b!, 0)![0]!;
      alone = Buffer.from(pathRecord(g, path, 'Fastest', 'simplified', maneuvers(g, path, 'en')).json);
    });
    // Both desks on this thread: the helper takes a job up only when the event loop runs (a tick after it is posted).
    const desks = () => {
      init = { words: helpWords(2), channel: `test-${Math.random()}`, minPieces: 0 };
      asker = new HelpDesk(init, 0, g);
      helper = new HelpDesk(init, 1, g);
    };
    const tick = () => new Promise((r) => setTimeout(r, 20));
    const close = () => {
      asker.close();
      helper.close();
    };

    it('a job taken up is written by the helper; one not taken up yet is revoked and written by the asker', async () => {
      desks();
      try {
        const handed = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        expect(handed).toBeDefined();
        // claimed: one more job may queue behind it, and no other
        const queued = asker.handOver(path, 'Alternative 1', 'simplified', 'en')!;
        expect(queued).toBeDefined();
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeUndefined();
        await tick();
        expect(pathsShared(init.words)).toBe(2);
        const t0 = performance.now();
        const [first, second] = [handed.take(), queued.take()];
        expect(performance.now() - t0).toBeLessThan(50); // the helper's answers, not a give-up
        expect(Buffer.from(first.json).equals(alone)).toBe(true);
        const relabelled = Buffer.from(alone.toString().replace('"Fastest"', '"Alternative 1"'));
        expect(Buffer.from(second.json).equals(relabelled)).toBe(true);

        const revoked = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        expect(Buffer.from(revoked.take().json).equals(alone)).toBe(true); // before the helper ran
        await tick();
        expect(pathsShared(init.words)).toBe(2); // the helper dropped the revoked job
        // and it is free again
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeDefined();
      } finally {
        close();
      }
    });

    it('a route handed over as the search found it is assembled by the helper, or by the asker when revoked', async () => {
      desks();
      try {
        const [a, b] = pairs(1)[0]!;
        let found: FoundRoute | undefined;
        const spy = { handOver: (p: RoutePath | FoundRoute) => void (found ??= 'n' in p ? undefined : p) };
        engine.routeSync(a!, b!, opts, undefined, spy); // offers the primary as found (and keeps it: no helper)
        const primary = engine.paths(a!, b!, 2)![0]!;
        const want = Buffer.from(pathRecord(g, primary, 'Fastest', 'simplified', maneuvers(g, primary, 'en')).json);
        expect(found!.turns.length).toBeGreaterThan(10);
        const handed = asker.handOver(found!, 'Fastest', 'simplified', 'en')!;
        await tick();
        expect(pathsShared(init.words)).toBe(1);
        expect(Buffer.from(handed.take().json).equals(want)).toBe(true);
        const revoked = asker.handOver(found!, 'Fastest', 'simplified', 'en')!;
        expect(Buffer.from(revoked.take().json).equals(want)).toBe(true);
      } finally {
        close();
      }
    });

    it('a job offered to a helper writing another is queued: written there next, or by the asker if not yet', async () => {
      desks();
      try {
        const WORKING = -2;
        Atomics.store(init.words, WORDS, WORKING); // the helper writes a path (for anyone)
        const queued = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        expect(queued).toBeDefined();
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeUndefined(); // one job queued at most
        Atomics.store(init.words, WORDS, 0); // done: idle
        await tick();
        expect(pathsShared(init.words)).toBe(1);
        expect(Buffer.from(queued.take().json).equals(alone)).toBe(true);
        expect(Atomics.load(init.words, WORDS)).toBe(0); // idle again after writing it

        Atomics.store(init.words, WORDS, WORKING);
        const revoked = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        expect(Buffer.from(revoked.take().json).equals(alone)).toBe(true); // still busy: written by the asker
        Atomics.store(init.words, WORDS, 0);
        await tick();
        expect(pathsShared(init.words)).toBe(1); // the helper dropped it
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeDefined(); // nothing left queued
      } finally {
        close();
      }
    });

    it('a helper running its own query is not asked; short paths are not offered', () => {
      desks();
      try {
        helper.running();
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeUndefined();
        helper.idle();
        init.minPieces = path.n + 1;
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')).toBeUndefined();
      } finally {
        close();
      }
    });

    it('a job for another graph is handed back to the asker; a helper that never answers is given up on', async () => {
      desks();
      try {
        helper.use({ ...g, meta: { ...g.meta, buildId: 'another import' } });
        const stale = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        await tick();
        const t0 = performance.now();
        expect(Buffer.from(stale.take().json).equals(alone)).toBe(true);
        expect(performance.now() - t0).toBeLessThan(50); // handed back, not given up on
        expect(pathsShared(init.words)).toBe(0);
        expect(asker.handOver(path, 'Fastest', 'simplified', 'en')?.take()).toBeDefined(); // and free again

        helper.close(); // takes the job up (as far as the words say) and dies before it answers
        const lost = asker.handOver(path, 'Fastest', 'simplified', 'en')!;
        Atomics.store(init.words, WORDS, -2);
        const t1 = performance.now();
        expect(Buffer.from(lost.take().json).equals(alone)).toBe(true);
        expect(performance.now() - t1).toBeGreaterThanOrEqual(90);
        expect(performance.now() - t1).toBeLessThan(2000);
      } finally {
        asker.close();
      }
    });
  });
});
