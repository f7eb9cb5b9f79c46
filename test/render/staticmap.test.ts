import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadImage } from '@napi-rs/canvas';
import { startServer, type TestServer } from '../helpers/app.js';
import { bytesOf, pngSize } from '../helpers/tiles.js';
import { TileStaticMap } from '../../src/render/staticmap.js';
import type { TileService } from '../../src/tiles/types.js';

const PATH = '43.7305,7.4165,43.7384,7.4246,43.7440,7.4300';

describe('staticmap', () => {
  let s: TestServer;
  let H: Record<string, string>;
  beforeAll(async () => {
    s = await startServer();
    H = { 'X-API-Key': s.key().key };
  });
  afterAll(() => s?.close());

  it('renders a PNG of the clamped size with the path drawn over stitched tiles', async () => {
    const r = await s.get(`/maps/v1/staticmap?path=${PATH}&w=400&h=200`, H);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
    const png = await bytesOf(r);
    expect(pngSize(png)).toEqual({ w: 400, h: 200 });
    // The route line is blue: sample the image and find its colour.
    const { createCanvas } = await import('@napi-rs/canvas');
    const img = await loadImage(png);
    const c = createCanvas(400, 200);
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const px = ctx.getImageData(0, 0, 400, 200).data;
    let blue = 0;
    for (let i = 0; i < px.length; i += 4)
      if (px[i]! < 60 && px[i + 1]! > 80 && px[i + 1]! < 130 && px[i + 2]! > 190) blue++;
    expect(blue).toBeGreaterThan(200);
  });

  it('defaults 600x260, caps at 1024, non-positive sizes use the default', async () => {
    expect(pngSize(await bytesOf(await s.get(`/maps/v1/staticmap?path=${PATH}`, H)))).toEqual({ w: 600, h: 260 });
    expect(pngSize(await bytesOf(await s.get(`/maps/v1/staticmap?path=${PATH}&w=5000&h=-3`, H)))).toEqual({
      w: 1024,
      h: 260,
    });
  });

  it('bare 400 for fewer than two valid points or semicolons; a tile token is not accepted', async () => {
    for (const p of ['43.7,7.4', '43.7,7.4;43.8,7.5', 'a,b,c,d', '']) {
      const r = await s.get(`/maps/v1/staticmap?path=${encodeURIComponent(p)}`, H);
      expect(r.status, p).toBe(400);
      expect((await bytesOf(r)).length).toBe(0);
    }
  });

  it('memory stays flat over 300 renders', async () => {
    const paths = Array.from(
      { length: 300 },
      (_, i) => `${30 + (i % 20) * 0.5},${31 + (i % 7) * 0.3},${30.4 + (i % 20) * 0.5},${31.6 + (i % 7) * 0.3}`,
    );
    for (const p of paths.slice(0, 30)) await s.get(`/maps/v1/staticmap?path=${p}&w=300&h=200`, H).then(bytesOf);
    global.gc?.();
    const before = process.memoryUsage().rss;
    for (const p of paths) {
      const r = await s.get(`/maps/v1/staticmap?path=${p}&w=300&h=200`, H);
      expect(r.status).toBe(200);
      await bytesOf(r);
    }
    global.gc?.();
    const grown = (process.memoryUsage().rss - before) / 1024 / 1024;
    console.log(`staticmap: RSS grew ${grown.toFixed(1)} MB over 300 renders`);
    expect(grown).toBeLessThan(80);
  }, 60_000);

  it('a map drawn in a static-map thread is the map drawn in-process, byte for byte', async () => {
    const { createCanvas } = await import('@napi-rs/canvas');
    const c = createCanvas(256, 256);
    const ctx = c.getContext('2d');
    ctx.fillStyle = '#c04040';
    ctx.fillRect(0, 0, 128, 256); // left half red: the tiles must really be decoded and drawn
    const tile = await c.encode('png');
    const tiles: TileService = { tile: async () => ({ bytes: tile, source: 'fresh' }) };
    const path = [
      { lat: 31.95, lng: 35.9 },
      { lat: 31.96, lng: 35.93 },
    ];
    const threaded = new TileStaticMap(tiles, { threads: 1 });
    try {
      const inProcess = await new TileStaticMap(tiles, { threads: 0 }).render(path, 300, 200);
      const fromThread = await threaded.render(path, 300, 200);
      expect(pngSize(fromThread)).toEqual({ w: 300, h: 200 });
      expect(Buffer.compare(fromThread, inProcess)).toBe(0);
      const px = createCanvas(300, 200).getContext('2d');
      px.drawImage(await loadImage(fromThread), 0, 0);
      const d = px.getImageData(0, 0, 300, 200).data;
      let red = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === 0xc0 && d[i + 1] === 0x40 && d[i + 2] === 0x40) red++;
      expect(red).toBeGreaterThan(5000);
    } finally {
      threaded.close();
    }
  });
});
