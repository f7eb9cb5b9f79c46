import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';
import { renderImporter } from '../../src/import/render-importer.js';
import { MONACO_PBF } from '../helpers/fixtures.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';

const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, 'test-output');
const haveChromium = chromiumAvailable('the MapLibre browser test');

const freePort = () =>
  new Promise<number>((res) => {
    const srv = createNetServer().listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/dist/maplibre-gl.css">
<style>html,body,#map{margin:0;width:100%;height:100%}</style></head>
<body><div id="map"></div><script type="module">
  import * as maplibregl from '/dist/maplibre-gl.mjs';
  window.__errors = [];
  const q = new URLSearchParams(location.search);
  const map = new maplibregl.Map({ container: 'map', style: q.get('style'), center: [7.4215, 43.7370], zoom: 14, fadeDuration: 0 });
  map.on('error', (e) => window.__errors.push(String((e.error && e.error.message) || e)));
  map.on('load', () => {
    // raster-nav has only a raster layer; a symbol layer makes MapLibre fetch glyphs (Latin and Arabic ranges).
    map.addSource('pt', { type: 'geojson', data: { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [7.4265, 43.7395] } } });
    map.addLayer({ id: 'label', type: 'symbol', source: 'pt', layout: { 'text-field': 'Monte-Carlo\\nمونت كارلو', 'text-font': ['Noto Sans Regular'], 'text-size': 18 },
      paint: { 'text-color': '#c0392b', 'text-halo-color': '#fff', 'text-halo-width': 2 } });
    map.once('idle', () => { window.__idle = true; });
  });
</script></body></html>`;

describe.skipIf(!haveChromium)('MapLibre GL JS in headless Chromium', () => {
  let s: TestServer;
  let page: Server;
  let browser: Browser;
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-browser-'));
  beforeAll(async () => {
    await renderImporter.run(MONACO_PBF, data, () => {}, new AbortController().signal);
    const port = await freePort();
    s = await startServer({ data_dir: data, port, public_url: `http://127.0.0.1:${port}` });
    // MapLibre 6 ships ES modules (main, shared and worker chunks): serve its dist/ folder as it is.
    const dist = join(ROOT, 'node_modules/maplibre-gl/dist');
    const types: Record<string, string> = { mjs: 'text/javascript', css: 'text/css', map: 'application/json' };
    page = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const m = /^\/dist\/([\w.-]+)$/.exec(path);
      if (m && existsSync(join(dist, m[1]!))) {
        res.writeHead(200, { 'Content-Type': types[m[1]!.split('.').pop()!] ?? 'application/octet-stream' });
        return res.end(readFileSync(join(dist, m[1]!)));
      }
      res.writeHead(path === '/' ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(path === '/' ? PAGE : '');
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    page?.close();
    await s?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('loads the raster-nav style, draws Monaco tiles and Arabic+English glyph labels without errors', async () => {
    const t = await tileToken(s);
    const style = `${s.url}/maps/v1/style/raster-nav?token=${t}&t=${t}`;
    const ctx = await browser.newContext({ viewport: { width: 900, height: 640 } });
    const tab = await ctx.newPage();
    const seen: Array<{ url: string; status: number; source: string | null }> = [];
    tab.on('response', (r) =>
      seen.push({ url: r.url(), status: r.status(), source: r.headers()['x-tile-source'] ?? null }),
    );
    const pageUrl = `http://127.0.0.1:${(page.address() as { port: number }).port}/?style=${encodeURIComponent(style)}`;
    await tab.goto(pageUrl);
    await tab.waitForFunction(() => (window as unknown as { __idle?: boolean }).__idle === true, undefined, {
      timeout: 45_000,
    });
    const errors = await tab.evaluate(() => (window as unknown as { __errors: string[] }).__errors);
    mkdirSync(OUT, { recursive: true });
    await tab.screenshot({ path: join(OUT, 'browser-monaco-z14.png') });
    await ctx.close();

    expect(errors).toEqual([]);
    // MapLibre zooms count 512 px tiles: map zoom 14 over a 256 px tile source asks for z15 tiles.
    const tiles = seen.filter((r) => r.url.includes('/maps/v1/tiles/15/'));
    expect(tiles.length).toBeGreaterThanOrEqual(6);
    expect(tiles.every((r) => r.status === 200 && r.url.includes('@2x.png') && r.url.includes(`t=${t}`))).toBe(true);
    const glyphs = seen.filter((r) => r.url.includes('/maps/v1/glyphs/'));
    expect(glyphs.some((r) => r.url.includes('0-255.pbf'))).toBe(true);
    expect(glyphs.some((r) => /(1536-1791|65024-65279)\.pbf/.test(r.url))).toBe(true);
    expect(glyphs.every((r) => r.status === 200)).toBe(true);
  }, 60_000);
});
