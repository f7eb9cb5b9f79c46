import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RoutingConfig } from '../../src/config/defaults.js';
import { silentLogger } from '../../src/core/log.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { createRoutingEngine, type RoutingTestHooks } from '../../src/routing/engine-factory.js';
import type { PooledRouter } from '../../src/routing/threads/route-pool.js';
import { decodeLeg, encodeLeg } from '../../src/routing/answer/route-record.js';
import type { RouteOptions } from '../../src/routing/types.js';
import { startServer } from '../helpers/app.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

// Short routes run on the HTTP thread while it has nothing else to do (route-inline.ts); everything else, and any
// search that runs over its budget, goes to the routing threads. Answers are the same bytes either way.
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svcmaps-inline-'));
  await roadsImporter.run(MONACO_PBF, dir, () => undefined, new AbortController().signal);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ~0.7 km apart (port to casino), and ~2.6 km apart (Fontvieille to Larvotto)
const near = [
  { lat: 43.7347, lng: 7.4206 },
  { lat: 43.7397, lng: 7.4275 },
] as const;
const far = [
  { lat: 43.7285, lng: 7.4155 },
  { lat: 43.7455, lng: 7.4355 },
] as const;
const opts = (inline: boolean): RouteOptions => ({ alternatives: 2, locale: 'ar', overview: 'simplified', inline });

/** A built-in router over the Monaco graph, its thread and its inline router up. */
async function engine(routing: Partial<RoutingConfig>, hooks: RoutingTestHooks = {}): Promise<PooledRouter> {
  const cfg = { ...DEFAULTS.routing, threads: 1, ...routing };
  const e = createRoutingEngine(cfg, dir, silentLogger, hooks) as PooledRouter;
  await e.whenReady();
  return e;
}

/** The leg as the route cache keeps it (an inline answer is encoded only then). */
const bytes = (r: Awaited<ReturnType<PooledRouter['route']>>) => {
  if (r.kind !== 'ok') throw new Error('no route');
  return r.encoded ?? encodeLeg('svc', r.paths);
};

describe('routes on the calling thread', () => {
  it('answers a short route there, the same bytes a routing thread answers', async () => {
    const e = await engine({ inline_max_km: 50 });
    try {
      const here = await e.route(near[0], near[1], opts(true));
      expect(e.stats).toMatchObject({ completed: 0, inline: { answered: 1, handedOn: 0 } });
      const there = await e.route(near[0], near[1], opts(false));
      expect(e.stats).toMatchObject({ completed: 1, inline: { answered: 1, handedOn: 0 } });
      expect(bytes(here).equals(bytes(there))).toBe(true);
      const leg = decodeLeg(bytes(here))!;
      expect(leg.paths.length).toBeGreaterThan(0);
      expect(Buffer.from(leg.paths[0]!.json).toString()).toContain('"maneuvers":[');
    } finally {
      e.close();
    }
  });

  it('sends routes past routing.inline_max_km, and every route when it is 0, to the routing threads', async () => {
    const e = await engine({ inline_max_km: 1 });
    const off = await engine({ inline_max_km: 0 });
    try {
      expect((await e.route(far[0], far[1], opts(true))).kind).toBe('ok');
      expect(e.stats).toMatchObject({ completed: 1, inline: { answered: 0 } });
      expect((await e.route(near[0], near[1], opts(true))).kind).toBe('ok');
      expect(e.stats).toMatchObject({ completed: 1, inline: { answered: 1 } });
      expect((await off.route(near[0], near[1], opts(true))).kind).toBe('ok');
      expect(off.stats).toMatchObject({ completed: 1, inline: { answered: 0 } });
    } finally {
      e.close();
      off.close();
    }
  });

  it('hands a search that runs over its budget on to a routing thread, which answers it', async () => {
    // The budget is checked every 512 nodes a search settles (counted across queries): with no budget at all,
    // the query during which the count passes a multiple of 512 gives up.
    const e = await engine({ inline_max_km: 50 }, { testInlineBudgetMs: -1 });
    try {
      let asked = 0;
      while (asked < 100 && e.stats!.inline!.handedOn === 0) {
        asked++;
        expect((await e.route(far[0], far[1], opts(true))).kind).toBe('ok');
      }
      const st = e.stats!;
      expect(st.inline).toEqual({ answered: asked - 1, handedOn: 1 });
      expect(st.completed).toBe(1); // the routing thread answered the one handed on
    } finally {
      e.close();
    }
  });

  it('answers unroutable there too (a point far from any road)', async () => {
    const e = await engine({ inline_max_km: 50, snap_max_m: 10 });
    try {
      expect(await e.route(near[0], { lat: 43.7, lng: 7.44 }, opts(true))).toEqual({ kind: 'unroutable' });
      expect(e.stats).toMatchObject({ completed: 0, inline: { answered: 1 } });
    } finally {
      e.close();
    }
  });
});

describe('over HTTP', () => {
  let slow: Server;
  let release: (() => void) | undefined;
  beforeAll(async () => {
    // a tile origin that answers when the test says: a request held in flight
    slow = createServer((_req, res) => {
      release = () => res.writeHead(404).end();
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  });
  afterAll(() => slow?.close());

  it('computes a lone request route on the HTTP thread, and one with another request in flight on a routing thread', async () => {
    const originUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const s = await startServer({
      data_dir: dir,
      routing: { threads: 1 },
      tiles: { origin: 'xyz', xyz_url: `${originUrl}/{z}/{x}/{y}.png`, store: false },
    });
    try {
      const e = s.app.services.directions.engine as PooledRouter;
      const H = { 'X-API-Key': s.key().key };
      const ask = (dest_lng: number) =>
        s.post(
          '/maps/v1/directions',
          { origin_lat: near[0].lat, origin_lng: near[0].lng, dest_lat: near[1].lat, dest_lng },
          H,
        );
      const alone = await ask(near[1].lng);
      expect(alone.status).toBe(200);
      expect((await alone.json()).data).toMatchObject({ source: 'fresh', engine: 'svc' });
      expect(e.stats).toMatchObject({ completed: 0, inline: { answered: 1 } });

      const tile = s.get('/maps/v1/tiles/12/2134/1493.png', H);
      for (let i = 0; i < 3000 && !release; i++) await new Promise((r) => setTimeout(r, 10));
      expect(release).toBeDefined(); // the tile request is in flight, waiting for its origin
      const busy = await ask(near[1].lng + 0.0002);
      expect((await busy.json()).data.source).toBe('fresh');
      expect(e.stats).toMatchObject({ completed: 1, inline: { answered: 1 } });
      release!();
      await tile;

      const text = await (await s.get('/admin/metrics', { 'X-API-Key': s.key({ role: 'super_admin' }).key })).text();
      expect(text).toContain('svcmaps_engine_tasks_inline_total{engine="routing",outcome="answered"} 1');
      expect(text).toContain('svcmaps_engine_tasks_inline_total{engine="routing",outcome="handed_on"} 0');
    } finally {
      await s.close();
    }
  });
});
