import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/app.js';
import { bytesOf, tileToken } from '../helpers/tiles.js';
import { TileRenderer } from '../../src/render/tile-renderer.js';
import { MBTiles } from '../../src/store/mbtiles.js';
import { XyzOrigin } from '../../src/tiles/origins/xyz.js';

/** A fake upstream XYZ server: /ok/ serves a PNG, /flaky/ fails twice first, /html/ serves HTML, /slow/ hangs. */
function upstream(png: Buffer) {
  const seen: Array<{ url: string; ua: string }> = [];
  const flaky = new Map<string, number>();
  const srv = createServer((req, res) => {
    seen.push({ url: req.url!, ua: String(req.headers['user-agent']) });
    const [, kind] = req.url!.split('/');
    if (kind === 'ok') return res.writeHead(200, { 'Content-Type': 'image/png' }).end(png);
    if (kind === 'missing') return res.writeHead(404).end();
    if (kind === 'html') return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>oops</html>');
    if (kind === 'flaky') {
      const n = (flaky.get(req.url!) ?? 0) + 1;
      flaky.set(req.url!, n);
      return n <= 2 ? res.writeHead(503).end() : res.writeHead(200).end(png);
    }
    if (kind === 'down') return res.writeHead(500).end();
    // slow: never answers
  });
  return { srv, seen };
}

describe('tile origins: upstream XYZ and another MBTiles', () => {
  let up: ReturnType<typeof upstream>;
  let base: string;
  let png: Buffer;
  beforeAll(async () => {
    png = await new TileRenderer().renderTile(1, 1, 0, 1, 'png');
    up = upstream(png);
    await new Promise<void>((r) => up.srv.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(up.srv.address() as { port: number }).port}`;
  });
  afterAll(() => {
    up?.srv.closeAllConnections();
    up?.srv.close();
  });

  const origin = (kind: string, extra: Partial<ConstructorParameters<typeof XyzOrigin>[0]> = {}) =>
    new XyzOrigin({
      url: `${base}/${kind}/{z}/{x}/{y}{r}.png`,
      userAgent: 'svcmaps-test/1 (ops@example.org)',
      timeoutMs: 300,
      retries: 2,
      concurrency: 2,
      ...extra,
    });

  it('fetches with the operator User-Agent, the @2x suffix, and retries 5xx with backoff', async () => {
    expect((await origin('ok').fetch(3, 4, 2, 2, AbortSignal.timeout(5000)))!.equals(png)).toBe(true);
    expect(up.seen.at(-1)).toEqual({ url: '/ok/3/4/2@2x.png', ua: 'svcmaps-test/1 (ops@example.org)' });
    expect((await origin('flaky').fetch(5, 1, 1, 1, AbortSignal.timeout(5000)))!.equals(png)).toBe(true);
    expect(up.seen.filter((s) => s.url === '/flaky/5/1/1.png')).toHaveLength(3);
  });

  it('404 is no tile; HTML is a failure; exhausted retries fail; a hung upstream times out', async () => {
    expect(await origin('missing').fetch(1, 0, 0, 1, AbortSignal.timeout(5000))).toBeUndefined();
    await expect(origin('html').fetch(1, 0, 0, 1, AbortSignal.timeout(5000))).rejects.toMatchObject({ kind: 'failed' });
    await expect(origin('down').fetch(1, 0, 0, 1, AbortSignal.timeout(5000))).rejects.toMatchObject({ kind: 'failed' });
    await expect(origin('slow', { retries: 0 }).fetch(1, 0, 0, 1, AbortSignal.timeout(5000))).rejects.toMatchObject({
      kind: 'timeout',
    });
  });

  it('never has more than `concurrency` requests in flight', async () => {
    let inflight = 0;
    let peak = 0;
    const f = globalThis.fetch;
    const counting = new XyzOrigin({
      url: `${base}/ok/{z}/{x}/{y}.png`,
      userAgent: 'x',
      timeoutMs: 1000,
      retries: 0,
      concurrency: 2,
      fetchImpl: async (u, init) => {
        peak = Math.max(peak, ++inflight);
        try {
          return await f(u, init);
        } finally {
          inflight--;
        }
      },
    });
    await Promise.all(Array.from({ length: 10 }, (_, i) => counting.fetch(4, i, 0, 1, AbortSignal.timeout(5000))));
    expect(peak).toBe(2);
  });

  it('through the server: xyz origin tiles are fresh then stored; an upstream that returns HTML gives bare 502', async () => {
    const s: TestServer = await startServer({
      tiles: { origin: 'xyz', xyz_url: `${base}/ok/{z}/{x}/{y}.png`, user_agent: 'svcmaps-it/1' },
    });
    const bad: TestServer = await startServer({ tiles: { origin: 'xyz', xyz_url: `${base}/html/{z}/{x}/{y}.png` } });
    try {
      const t = await tileToken(s);
      const r = await s.get(`/maps/v1/tiles/2/1/1.png?t=${t}`);
      expect(r.headers.get('x-tile-source')).toBe('fresh');
      expect((await bytesOf(r)).equals(png)).toBe(true);
      const b = await bad.get(`/maps/v1/tiles/2/1/1.png?t=${await tileToken(bad)}`);
      expect(b.status).toBe(502);
      expect(b.headers.get('retry-after')).toBe('1');
    } finally {
      await s.close();
      await bad.close();
    }
  });

  it('through the server: another MBTiles file as origin; tiles it lacks are 404', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-origin-mbt-'));
    const file = join(dir, 'other.mbtiles');
    const m = new MBTiles(file);
    m.putMany([{ z: 1, x: 1, y: 0, data: png }]);
    m.close();
    const s = await startServer({ tiles: { origin: 'mbtiles', mbtiles_path: file } });
    try {
      const t = await tileToken(s);
      const r = await s.get(`/maps/v1/tiles/1/1/0.png?t=${t}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-tile-source')).toBe('fresh');
      expect((await s.get(`/maps/v1/tiles/1/0/0.png?t=${t}`)).status).toBe(404);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
