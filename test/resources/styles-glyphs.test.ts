import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG } from 'pngjs';
import { validateStyleMin } from '@maplibre/maplibre-gl-style-spec';
import { startServer, errorCode, type TestServer } from '../helpers/app.js';

describe('styles, glyphs, sprites, vector', () => {
  let s: TestServer;
  let token: string;
  let key: string;
  beforeAll(async () => {
    s = await startServer();
    key = s.key().key;
    const r = await fetch(s.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key } });
    token = ((await r.json()) as { data: { token: string } }).data.token;
  });
  afterAll(() => s?.close());

  it('generates raster-nav with the token on its URLs, 256 px @2x tiles, CORS and private caching', async () => {
    const r = await s.get(`/maps/v1/style/raster-nav?t=${token}&token=${token}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('private, max-age=60');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const style = await r.json();
    expect(style.version).toBe(8);
    expect(style.glyphs).toBe(`/maps/v1/glyphs/{fontstack}/{range}.pbf?t=${token}`);
    const [src] = Object.values<any>(style.sources);
    expect(src).toMatchObject({
      type: 'raster',
      tileSize: 256,
      attribution: '',
      tiles: [`/maps/v1/tiles/{z}/{x}/{y}@2x.png?t=${token}`],
    });
    expect(style.layers).toHaveLength(1);
    expect(style.layers[0].type).toBe('raster');
    expect(validateStyleMin(style)).toEqual([]);
  });

  it('serves the bundled svc style (and its maplibre alias, .json accepted) with __TOKEN__ substituted or removed', async () => {
    const a = await (await s.get(`/maps/v1/style/svc.json?token=${token}`, { 'X-API-Key': key })).text();
    expect(a).not.toContain('__TOKEN__');
    expect(a).not.toContain('__BASE__');
    expect(a).toContain(`/maps/v1/tiles/{z}/{x}/{y}@2x.png?t=${token}`);
    const b = await (await s.get(`/maps/v1/style/maplibre?t=${token}`)).json();
    expect(JSON.stringify(b)).not.toMatch(/\?t=|__TOKEN__/);
    expect(validateStyleMin(JSON.parse(a))).toEqual([]);
    expect(validateStyleMin(b)).toEqual([]);
  });

  it('answers unknown style names and injected tokens with bare statuses', async () => {
    const r = await s.get(`/maps/v1/style/satellite?t=${token}`);
    expect(r.status).toBe(404);
    expect(await r.text()).toBe('');
    const bad = await s.get(`/maps/v1/style/svc?t=${token}&token=${encodeURIComponent('"},{"x":"')}`);
    expect(bad.status).toBe(400);
  });

  it('uses the public URL for absolute style URLs when configured', async () => {
    const p = await startServer({ public_url: 'https://maps.example.org' });
    const k = p.key().key;
    const style = await (await p.get('/maps/v1/style/raster-nav', { 'X-API-Key': k })).json();
    expect(style.glyphs).toBe('https://maps.example.org/maps/v1/glyphs/{fontstack}/{range}.pbf');
    const svc = await (await p.get('/maps/v1/style/svc', { 'X-API-Key': k })).text();
    expect(svc).toContain('"https://maps.example.org/maps/v1/tiles/{z}/{x}/{y}@2x.png"');
    await p.close();
  });

  it('serves SDF glyphs for Latin and Arabic from one fontstack, with fallback and immutable caching', async () => {
    for (const range of ['0-255', '256-511', '1536-1791', '64256-64511', '65024-65279']) {
      const r = await s.get(`/maps/v1/glyphs/Noto%20Sans%20Regular/${range}.pbf?t=${token}`);
      expect(r.status, range).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/x-protobuf');
      expect(r.headers.get('cache-control')).toBe('public, max-age=2592000, immutable');
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
    const fallback = await s.get(
      `/maps/v1/glyphs/${encodeURIComponent('Open Sans Bold,Noto Sans Regular')}/0-255.pbf?t=${token}`,
    );
    expect(fallback.status).toBe(200);
  });

  it('answers glyph path tricks with 400 and unbundled ranges or fonts with 404, both bare', async () => {
    const cases: Array<[string, number]> = [
      ['/maps/v1/glyphs/..%2F..%2Fetc/0-255.pbf', 400],
      ['/maps/v1/glyphs/Noto%20Sans%20Regular%5C..%5Cx/0-255.pbf', 400],
      ['/maps/v1/glyphs/Noto/Sans/0-255.pbf', 400],
      ['/maps/v1/glyphs/Noto%20Sans%20Regular/0-255%2F.pbf', 400],
      ['/maps/v1/glyphs/Noto%20Sans%20Regular/512-767.pbf', 404],
      ['/maps/v1/glyphs/Noto%20Sans%20Regular/0-255.png', 404],
      ['/maps/v1/glyphs/Comic%20Sans/0-255.pbf', 404],
    ];
    for (const [path, status] of cases) {
      const r = await s.get(`${path}?t=${token}`);
      expect(r.status, path).toBe(status);
      expect(await r.text()).toBe('');
    }
  });

  it('serves sprite stubs: {} for .json, a transparent 1x1 PNG of 67 bytes for .png, 404 otherwise', async () => {
    const j = await s.get(`/maps/v1/sprites/svc@2x.json?t=${token}`);
    expect(j.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await j.json()).toEqual({});
    const p = await s.get(`/maps/v1/sprites/svc.png?t=${token}`);
    const bytes = Buffer.from(await p.arrayBuffer());
    expect(bytes.length).toBe(67);
    const png = PNG.sync.read(bytes);
    expect([png.width, png.height, png.data[3]]).toEqual([1, 1, 0]);
    expect((await s.get(`/maps/v1/sprites/svc.svg?t=${token}`)).status).toBe(404);
  });

  it('revalidates static resources with ETag / If-None-Match', async () => {
    const first = await s.get(`/maps/v1/glyphs/Noto%20Sans%20Regular/0-255.pbf?t=${token}`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"/);
    const again = await s.get(`/maps/v1/glyphs/Noto%20Sans%20Regular/0-255.pbf?t=${token}`, { 'If-None-Match': etag });
    expect(again.status).toBe(304);
  });

  it('never offers vector tiles: 501 VECTOR_TILES_NOT_SUPPORTED', async () => {
    const r = await s.get(`/maps/v1/vector/osm/1/0/0?t=${token}`);
    expect(r.status).toBe(501);
    expect(await errorCode(r)).toBe('VECTOR_TILES_NOT_SUPPORTED');
    expect((await s.get('/maps/v1/vector/osm/1/0/0')).status).toBe(401);
  });
});
