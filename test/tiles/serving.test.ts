import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/app.js';
import { bytesOf, pngSize, SwitchOrigin, tileToken } from '../helpers/tiles.js';
import { HotTier } from '../../src/cache/hot-tier.js';
import { configWith } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/log.js';
import { TileRenderer } from '../../src/render/tile-renderer.js';
import { createOrigin, createTileStack, type TileStack } from '../../src/tiles/factory.js';
import { RenderOrigin } from '../../src/tiles/origins/render.js';
import type { TieredTileService } from '../../src/tiles/tiered.js';

describe('tiles: tiers, formats, sizes, conditional requests', () => {
  let s: TestServer;
  let t: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-tiles-'));
  // A tile takes as long as it needs (these tests are not about the timeout): render threads yield the CPU to other
  // work, and on a busy machine their start-up alone can take longer than the default tiles.timeout_ms.
  const config = { data_dir: dataDir, tiles: { timeout_ms: 120_000 }, http: { request_timeout_ms: 120_000 } };
  beforeAll(async () => {
    s = await startServer(config);
    t = await tileToken(s);
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('cold tile is fresh, then memory; after a restart it comes from the MBTiles warm tier', async () => {
    const a = await s.get(`/maps/v1/tiles/3/4/3.png?t=${t}`);
    expect(a.status).toBe(200);
    expect(a.headers.get('x-tile-source')).toBe('fresh');
    expect(a.headers.get('content-type')).toBe('image/png');
    expect(a.headers.get('cache-control')).toBe('public, max-age=3600, stale-while-revalidate=86400');
    const body = await bytesOf(a);
    expect(pngSize(body)).toEqual({ w: 256, h: 256 });
    const b = await s.get(`/maps/v1/tiles/3/4/3?t=${t}`);
    expect(b.headers.get('x-tile-source')).toBe('memory');
    expect((await bytesOf(b)).equals(body)).toBe(true);
    await s.close(); // flushes the warm tier
    s = await startServer(config);
    t = await tileToken(s);
    const c = await s.get(`/maps/v1/tiles/3/4/3.png?t=${t}`);
    expect(c.headers.get('x-tile-source')).toBe('cache');
    expect((await bytesOf(c)).equals(body)).toBe(true);
  }, 120_000);

  it('@2x is 512 px and @3x 768 px, drawn at that resolution', async () => {
    const two = await bytesOf(await s.get(`/maps/v1/tiles/2/2/1@2x.png?t=${t}`));
    const three = await bytesOf(await s.get(`/maps/v1/tiles/2/2/1@3x.png?t=${t}`));
    expect(pngSize(two)).toEqual({ w: 512, h: 512 });
    expect(pngSize(three)).toEqual({ w: 768, h: 768 });
  }, 120_000);

  it('jpg, jpeg, webp and gif requests get real image bytes with the sniffed Content-Type', async () => {
    const want: Record<string, string> = {
      jpg: 'image/jpeg',
      jpeg: 'image/jpeg',
      webp: 'image/webp',
      gif: 'image/png',
      png: 'image/png',
    };
    for (const [ext, type] of Object.entries(want)) {
      const r = await s.get(`/maps/v1/tiles/1/1/0.${ext}?t=${t}`);
      expect(r.status, ext).toBe(200);
      expect(r.headers.get('content-type'), ext).toBe(type);
      expect((await bytesOf(r)).length).toBeGreaterThan(500);
    }
  });

  it('ETag and If-None-Match give 304 without a body', async () => {
    const a = await s.get(`/maps/v1/tiles/4/8/5.png?t=${t}`);
    const tag = a.headers.get('etag')!;
    expect(tag).toMatch(/^"/);
    const b = await s.get(`/maps/v1/tiles/4/8/5.png?t=${t}`, { 'If-None-Match': tag });
    expect(b.status).toBe(304);
    expect((await bytesOf(b)).length).toBe(0);
    const c = await s.get(`/maps/v1/tiles/4/8/5.png?t=${t}`, { 'If-None-Match': '"other"' });
    expect(c.status).toBe(200);
    // The service hands out the same tag with every answer (hashed once per cached tile, or taken from MBTiles).
    const answer = await s.app.services.tiles.tile({ z: 4, x: 8, y: 5, scale: 1, format: 'png', prefetch: false });
    expect(answer!.etag).toBe(tag);
  });

  it('bare 400 for bad z/x/y or format, 401 envelope without credentials, X-API-Key also works', async () => {
    for (const p of ['21/0/0.png', '3/8/0.png', '3/0/8.png', '3/0/0.bmp', '3/0/0@4x.png', 'a/0/0.png']) {
      const r = await s.get(`/maps/v1/tiles/${p}?t=${t}`);
      expect(r.status, p).toBe(400);
      expect((await bytesOf(r)).length, p).toBe(0);
    }
    const anon = await s.get('/maps/v1/tiles/0/0/0.png');
    expect(anon.status).toBe(401);
    expect((await anon.json()).error.code).toBe('AUTH_REQUIRED');
    const key = await s.get('/maps/v1/tiles/0/0/0.png', { 'X-API-Key': s.key().key });
    expect(key.status).toBe(200);
  });

  it('single-flight: 20 concurrent requests for one cold tile render it once', async () => {
    const tiles = s.app.services.tiles as TieredTileService;
    const before = tiles.originCalls;
    const rs = await Promise.all(Array.from({ length: 20 }, () => s.get(`/maps/v1/tiles/6/37/25@2x.png?t=${t}`)));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    const bodies = await Promise.all(rs.map(bytesOf));
    expect(bodies.every((b) => b.equals(bodies[0]!))).toBe(true);
    expect(tiles.originCalls - before).toBe(1);
  });
});

describe('tiles: the render origin without render threads', () => {
  it('draws on the calling thread, its renderer loaded at the first tile', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-tiles-inproc-'));
    const origin = createOrigin(
      configWith({ data_dir: dataDir, tiles: { origin: 'render', render_threads: 0 } }),
      dataDir,
    )!;
    try {
      expect((origin as RenderOrigin).stats).toBeUndefined(); // no pool
      const png = await origin.fetch(2, 2, 1, 1);
      expect(pngSize(png)).toEqual({ w: 256, h: 256 });
      expect((await origin.fetch(2, 2, 1, 1)).equals(png)).toBe(true); // the same renderer draws again
    } finally {
      origin.close?.();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('tiles: origin failures, stand-ins and 404', () => {
  let s: TestServer;
  let t: string;
  let origin: SwitchOrigin;
  let stack: TileStack;
  const dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-tiles-fail-'));
  beforeAll(async () => {
    // a slow fetch is held until the test releases it (or for ten minutes, far past any test's timeout)
    origin = new SwitchOrigin(new RenderOrigin(new TileRenderer()), 600_000);
    const config = configWith({ data_dir: dataDir, tiles: { timeout_ms: 400 } });
    stack = createTileStack(config, dataDir, new HotTier(32 * 1024 * 1024), silentLogger, origin);
    s = await startServer({ data_dir: dataDir }, { tiles: stack.tiles });
    t = await tileToken(s);
  });
  afterAll(async () => {
    stack?.close();
    await s?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('origin failure: a stored ancestor is cut and scaled (ancestor-zN, no-store); prefetch gets 503; none gives 502', async () => {
    expect((await s.get(`/maps/v1/tiles/3/4/3.png?t=${t}`)).headers.get('x-tile-source')).toBe('fresh');
    origin.mode = 'fail';
    const r = await s.get(`/maps/v1/tiles/5/17/12.png?t=${t}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-tile-source')).toBe('ancestor-z3');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(pngSize(await bytesOf(r))).toEqual({ w: 256, h: 256 });
    const pre = await s.get(`/maps/v1/tiles/5/17/12.png?t=${t}`, { 'X-Svc-Prefetch': '1' });
    expect(pre.status).toBe(503);
    const none = await s.get(`/maps/v1/tiles/5/0/0.png?t=${t}`);
    expect(none.status).toBe(502);
    expect(none.headers.get('retry-after')).toBe('1');
    expect((await bytesOf(none)).length).toBe(0);
  });

  it('slow origin: stand-in after tiles.timeout_ms, or 504 with Retry-After 1; the late tile is stored for next time', async () => {
    origin.mode = 'slow';
    const r = await s.get(`/maps/v1/tiles/4/9/6.png?t=${t}`);
    expect(r.headers.get('x-tile-source')).toBe('ancestor-z3');
    // answered at tiles.timeout_ms while the origin still holds the tile: it did not wait for the origin
    expect(origin.holding).toBe(1);
    const none = await s.get(`/maps/v1/tiles/2/0/0.png?t=${t}`);
    expect(none.status).toBe(504);
    expect(none.headers.get('retry-after')).toBe('1');
    expect(origin.holding).toBe(2);
    // the origin answers both late; their productions carry on without a requester and store the tiles
    const answered = origin.answered;
    origin.release();
    for (let i = 0; i < 3000 && origin.answered < answered + 2; i++) await new Promise((res) => setTimeout(res, 10));
    expect(origin.answered).toBe(answered + 2);
    origin.mode = 'fail';
    const later = await s.get(`/maps/v1/tiles/2/0/0.png?t=${t}`);
    expect(later.status).toBe(200);
    expect(later.headers.get('x-tile-source')).toBe('cache'); // stored by the production that outlived the request
  });

  it('prefetch misses are fresh-prefetch; an origin without the tile is a bare 404', async () => {
    origin.mode = 'ok';
    const p = await s.get(`/maps/v1/tiles/4/10/6.png?t=${t}`, { 'X-Svc-Prefetch': 'yes' });
    expect(p.headers.get('x-tile-source')).toBe('fresh-prefetch');
    origin.mode = 'missing';
    const m = await s.get(`/maps/v1/tiles/7/1/1.png?t=${t}`);
    expect(m.status).toBe(404);
    expect((await bytesOf(m)).length).toBe(0);
  });
});
