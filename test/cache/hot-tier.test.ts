import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HotTier, LARGE_ANSWER_BYTES } from '../../src/cache/hot-tier.js';
import { startServer, type TestServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';

const buf = (n: number) => Buffer.alloc(n, 1);

describe('hot tier counts', () => {
  it('counts hits and misses per kind at get() and follows entries and bytes through replacement and eviction', () => {
    const hot = new HotTier(10_000);
    expect(hot.stats()).toEqual({
      capacity_bytes: 10_000,
      bytes: 0,
      entries: 0,
      tiles: { hits: 0, misses: 0, hit_rate: null, entries: 0, bytes: 0 },
      answers: { hits: 0, misses: 0, hit_rate: null, entries: 0, bytes: 0 },
    });
    expect(hot.get('t:0:1/2/3@1.png')).toBeUndefined();
    hot.set('t:0:1/2/3@1.png', buf(1000));
    expect(hot.get('t:0:1/2/3@1.png')).toBeDefined();
    expect(hot.get('t:0:1/2/3@1.png')).toBeDefined();
    hot.set('ac|1|en|q', buf(100));
    expect(hot.get('ac|1|en|q')).toBeDefined();
    expect(hot.get('rv|1|en|0,0')).toBeUndefined();
    let st = hot.stats();
    expect(st.tiles).toMatchObject({ hits: 2, misses: 1, entries: 1 });
    expect(st.tiles.hit_rate).toBeCloseTo(2 / 3);
    expect(st.answers).toMatchObject({ hits: 1, misses: 1, hit_rate: 0.5, entries: 1 });
    expect(st.tiles.bytes + st.answers.bytes).toBe(st.bytes);
    expect(st.entries).toBe(2);
    // Replacing a value, setting the same buffer again, and the health probe leave the books balanced.
    const same = buf(300);
    hot.set('ac|1|en|q', same);
    hot.set('ac|1|en|q', same);
    expect(hot.check()).toBe('ok');
    st = hot.stats();
    expect(st.answers.entries).toBe(1);
    expect(st.tiles.bytes + st.answers.bytes).toBe(st.bytes);
    // Evictions: many tiles push everything older out; the counts follow.
    for (let i = 0; i < 30; i++) hot.set(`t:0:5/${i}/0@1.png`, buf(900));
    st = hot.stats();
    expect(st.bytes).toBeLessThanOrEqual(10_000);
    expect(st.tiles.entries + st.answers.entries).toBe(st.entries);
    expect(st.tiles.bytes + st.answers.bytes).toBe(st.bytes);
    // Lookups are counted, the probe's are not.
    expect(st.tiles.hits + st.tiles.misses + st.answers.hits + st.answers.misses).toBe(5);
  });

  it('large answers (long routes) share an eighth of the capacity and never push tiles or small answers out', () => {
    const cap = 64 * LARGE_ANSWER_BYTES;
    const hot = new HotTier(cap);
    for (let i = 0; i < 20; i++) hot.set(`t:0:9/${i}/0@1.png`, buf(LARGE_ANSWER_BYTES / 2));
    hot.set('ac|1|en|q', buf(100));
    const large = (i: number) => `route3:svc:${i}`;
    for (let i = 0; i < 100; i++) hot.set(large(i), buf(LARGE_ANSWER_BYTES + 1));
    const st = hot.stats();
    expect(st.tiles.entries).toBe(20);
    expect(hot.has('ac|1|en|q')).toBe(true);
    // the large share holds the newest few of them, and the whole stays within capacity
    expect(st.answers.entries - 1).toBe(7);
    expect(hot.has(large(99)) && !hot.has(large(91))).toBe(true);
    expect(st.bytes).toBeLessThanOrEqual(cap);
    // a key that shrinks below the threshold moves to the main share and is found there, once
    hot.set(large(99), buf(10));
    expect(hot.get(large(99))?.length).toBe(10);
    expect(hot.stats().answers.entries - 1).toBe(7);
  });
});

describe('GET /admin/status', () => {
  let s: TestServer;
  let admin: { key: string };
  beforeAll(async () => {
    s = await startServer();
    admin = s.key({ role: 'super_admin' });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('reports the hot tier hit rate, uptime and the data directory, to super_admin only', async () => {
    const H = { 'X-API-Key': admin.key };
    const t = await tileToken(s);
    for (let i = 0; i < 3; i++) expect((await s.get(`/maps/v1/tiles/2/1/1.png?t=${t}`)).status).toBe(200);
    const r = await s.get('/admin/status', H);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const d = (await r.json()).data;
    expect(d.hot_tier.capacity_bytes).toBe(s.app.services.config.cache.memory_bytes);
    // Each request looks the tile up once: one miss, then two hits.
    expect(d.hot_tier.tiles).toMatchObject({ hits: 2, misses: 1, entries: 1 });
    expect(d.hot_tier.tiles.hit_rate).toBeCloseTo(2 / 3);
    expect(d.hot_tier.tiles.bytes).toBeGreaterThan(0);
    expect(d.hot_tier.bytes).toBe(d.hot_tier.tiles.bytes + d.hot_tier.answers.bytes);
    expect(Object.keys(d.hot_tier.answers).sort()).toEqual(['bytes', 'entries', 'hit_rate', 'hits', 'misses']);
    expect(d.uptime_s).toBeGreaterThanOrEqual(0);
    expect(d.health).toMatchObject({ redis: 'ok' });
    for (const k of ['data_dir', 'store', 'places', 'roads', 'render', 'tiles', 'disk']) expect(d).toHaveProperty(k);
    expect(d.store).toMatchObject({ keys: 2, active_keys: 2 }); // the admin key and the tile-token caller's
    expect(d.tiles[0]).toMatchObject({ scale: 1 });
    const user = s.key();
    expect((await s.get('/admin/status', { 'X-API-Key': user.key })).status).toBe(403);
  });
});
