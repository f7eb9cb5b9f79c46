import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../helpers/cli.js';
import { startPlacesServer, errorCode, type TestServer } from '../helpers/app.js';
import { haversineMeters } from '../../src/core/geo.js';
import { MONACO_PBF, OSM_FIXTURES } from '../helpers/fixtures.js';
import { regionalGazetteer } from '../helpers/gazetteer.js';
import { PlacesIndex } from '../../src/store/places/index-db.js';
import { PLACES_FILE, cellToken, nearExpression } from '../../src/store/places/schema.js';
import { inspectDataDir } from '../../src/ops/status.js';
import { statusText } from '../../src/cli/status.js';
import { openDb } from '../../src/store/db.js';

type Pred = { place_id: string; name: string; address: string; lat: number; lng: number; distance_meters?: number };

describe('embedded gazetteer', () => {
  let s: TestServer;
  let H: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-places-'));
    s = await startPlacesServer(dir);
    H = { 'X-API-Key': s.key().key };
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function top(
    q: string,
    extra = '',
    headers: Record<string, string> = {},
  ): Promise<{ preds: Pred[]; source: string }> {
    const r = await s.get(`/maps/v1/autocomplete?q=${encodeURIComponent(q)}${extra}`, { ...H, ...headers });
    expect(r.status).toBe(200);
    const j = (await r.json()) as { data: { predictions: Pred[]; source: string } };
    return { preds: j.data.predictions, source: j.data.source };
  }

  it.each([
    ['Amman', 31.95, 35.93],
    ['عمّان', 31.95, 35.93],
    ['عمان', 31.95, 35.93],
    ['Doha', 25.29, 51.53],
    ['الدوحة', 25.29, 51.53],
    ['Riyadh', 24.69, 46.72],
    ['Dubai', 25.07, 55.3],
    ['Cairo', 30.06, 31.25],
    ['القاهرة', 30.06, 31.25],
  ])('finds %s near the right coordinates', async (q, lat, lng) => {
    const { preds } = await top(q);
    expect(preds.length).toBeGreaterThan(0);
    expect(haversineMeters(preds[0]!, { lat, lng })).toBeLessThan(15_000);
    expect(preds[0]!.place_id).toMatch(/^g_[0-9a-f]{16}$/);
  });

  it('finds the same place with and without diacritics, hamza forms and tatweel', async () => {
    const ids = await Promise.all(
      ['عمّان', 'عمان', 'عمـــان'].map(async (q) => (await top(q, '&locale=ar')).preds[0]!.place_id),
    );
    expect(new Set(ids).size).toBe(1);
    const irbid = await Promise.all(
      ['إربد', 'اربد', 'أربد'].map(async (q) => (await top(q, '&locale=ar')).preds[0]!.place_id),
    );
    expect(new Set(irbid).size).toBe(1);
  });

  it('shows names in the caller locale (parameter, then Accept-Language)', async () => {
    expect((await top('Amman', '&locale=ar')).preds[0]!.name).toBe('عمّان');
    expect((await top('Amman', '', { 'Accept-Language': 'ar-JO,ar;q=0.9' })).preds[0]!.name).toBe('عمّان');
    const en = (await top('القاهرة', '&locale=en')).preds[0]!;
    expect(en.name).toBe('Cairo');
    expect(en.address).toBe('Egypt');
  });

  it('prefers a nearby place for a prefix and still puts a capital first for its bare name', async () => {
    const nearIrbid = (await top('Ir', '&lat=32.55&lng=35.85')).preds[0]!;
    expect(nearIrbid.name).toBe('Irbid');
    expect(nearIrbid.distance_meters).toBeGreaterThan(0);
    expect(nearIrbid.distance_meters).toBeLessThan(5000);
    const doha = (await top('Doha', '&lat=31.95&lng=35.91')).preds[0]!;
    expect(doha.address).toBe('Qatar');
  });

  it('falls back to the caller country centre when lat/lng are absent or 0, with no distances', async () => {
    const p = (await top('zarqa', '&lat=0&lng=0')).preds;
    expect(p[0]!.name).toBe('Zarqa');
    expect(p[0]).not.toHaveProperty('distance_meters');
  });

  it('serves repeats from the memory tier and says so', async () => {
    const first = await top('Madaba', '&lat=31.7&lng=35.8');
    expect(first.source).toBe('fresh');
    const again = await top('Madaba', '&lat=31.7&lng=35.8');
    expect(again.source).toBe('memory');
    expect(again.preds).toEqual(first.preds);
    expect((await top('qqqzzzxxx')).source).toBe('empty');
  });

  it('geocodes through place details and reports no match with matched:false only', async () => {
    const r = await (await s.post('/maps/v1/geocode', { address: 'Doha' }, H)).json();
    expect(r.data).toMatchObject({
      matched: true,
      source: 'svc_place_details',
      name: 'Doha',
      formatted_address: 'Doha, Qatar',
    });
    expect(haversineMeters(r.data, { lat: 25.29, lng: 51.53 })).toBeLessThan(10_000);
    for (const [address, name] of [
      ['Amman, Jordan', 'Amman'],
      ['Irbid Jordan', 'Irbid'],
      ['القاهرة، مصر', 'Cairo'],
    ]) {
      const g = await (await s.post('/maps/v1/geocode', { address }, H)).json();
      expect(g.data.name, address).toBe(name);
    }
    const none = await (await s.post('/maps/v1/geocode', { address: 'qqqzzzxxx yyy' }, H)).json();
    expect(none.data).toEqual({ matched: false });
  });

  it('reverse geocodes a city centre as approximate and the open sea as no_address', async () => {
    const city = await (await s.post('/maps/v1/reverse', { lat: 31.955, lng: 35.93 }, H)).json();
    expect(city.data).toMatchObject({ source: 'approximate', formatted_address: 'Amman, Jordan' });
    const ar = await (
      await s.post('/maps/v1/reverse', { lat: 31.955, lng: 35.93 }, { ...H, 'Accept-Language': 'ar' })
    ).json();
    expect(ar.data.formatted_address).toBe('عمّان، الأردن');
    const sea = await (await s.post('/maps/v1/reverse', { lat: 33.5, lng: 33.0 }, H)).json();
    expect(sea.data).toEqual({ lat: 33.5, lng: 33.0, formatted_address: '', source: 'no_address' });
  });

  it('returns a full place record by ID, 404 for an unknown one, and the minimal record in cache_only', async () => {
    const [amman] = (await top('Amman')).preds;
    const r = await (await s.get(`/maps/v1/place/${amman!.place_id}`, H)).json();
    expect(r.data).toMatchObject({
      place_id: amman!.place_id.slice(2),
      name: 'Amman',
      name_localized: { en: 'Amman', ar: 'عمّان' },
      address: 'Jordan',
      ownership_tier: 'seed',
    });
    expect(BigInt(r.data.cid).toString(16).padStart(16, '0')).toBe(amman!.place_id.slice(2));
    const unknown = await s.get('/maps/v1/place/ffffffffffffffff', H);
    expect(unknown.status).toBe(404);
    expect(await errorCode(unknown)).toBe('PLACE_NOT_FOUND');
    const minimal = await (
      await s.get('/maps/v1/place/ffffffffffffffff?cache_only=1&q=Shop&lat=31.9&lng=35.9', H)
    ).json();
    expect(minimal.data).toMatchObject({ place_id: 'ffffffffffffffff', name: 'Shop', lat: 31.9, lng: 35.9 });
  });

  it('serves operator photos for a place from the data directory, and never outside it', async () => {
    const [amman] = (await top('Amman')).preds;
    const cid = amman!.place_id.slice(2);
    mkdirSync(join(dir, 'photos', cid), { recursive: true });
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    writeFileSync(join(dir, 'photos', cid, 'citadel.png'), png);
    const r = await (await s.get(`/maps/v1/place-photos?lat=${amman!.lat}&lng=${amman!.lng}`, H)).json();
    expect(r.data.place_id).toBe(amman!.place_id);
    expect(r.data.photos).toEqual([`/maps/v1/place-photo-files/${cid}/citadel.png`]);
    const file = await s.get(`/maps/v1/place-photo-files/${cid}/citadel.png`, H);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    for (const bad of [`${cid}/..%2F..%2Fsvcmaps.db`, `..%2F${cid}/citadel.png`, `${cid}/tile-token.secret`]) {
      expect((await s.get(`/maps/v1/place-photo-files/${bad}`, H)).status, bad).toBe(404);
    }
  });
});

describe('OSM imports through the CLI', () => {
  let dir: string;
  let s: TestServer;
  let H: Record<string, string>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-import-'));
    // The gazetteer's places in the countries searched here (Jordan, Egypt, Monaco), carried over by every import as
    // the whole of it would be; the embedded gazetteer itself is searched above.
    await regionalGazetteer(dir, ['jo', 'eg', 'mc']);
    for (const f of ['monaco.osm.pbf', 'egypt-osm-nodes.geojsonl.gz']) {
      const r = spawnSync(
        process.execPath,
        [...CLI, 'import', join(OSM_FIXTURES, f), '--data', dir, '--only', 'places', '--json'],
        { encoding: 'utf8' },
      );
      expect(r.status, r.stderr).toBe(0);
      const [summary] = JSON.parse(r.stdout);
      expect(summary.importer).toBe('places');
    }
    s = await startPlacesServer(dir);
    H = { 'X-API-Key': s.key().key };
  }, 180_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds Monaco streets and POIs with their context, and keeps the gazetteer', async () => {
    const r = await (await s.get('/maps/v1/autocomplete?q=Casino&lat=43.739&lng=7.427', H)).json();
    expect(r.data.predictions[0].name).toMatch(/Casino/);
    expect(r.data.predictions[0].address).toMatch(/Monaco/);
    const amman = await (await s.get('/maps/v1/autocomplete?q=Amman', H)).json();
    expect(amman.data.predictions[0].name).toBe('Amman');
  });

  it('a typed word longer than the prefix indexes matches every term it begins, as a prefix query does', async () => {
    const index = new PlacesIndex(join(dir, PLACES_FILE));
    try {
      const all = index.prefixTerms('', 1_000_000)!;
      expect(all.length).toBeGreaterThan(1000);
      // every 7-letter beginning of the index's long words, Latin and Arabic
      const prefixes = [...new Set(all.filter((t) => [...t].length >= 9).map((t) => [...t].slice(0, 7).join('')))];
      expect(prefixes.some((p) => /[\u0600-\u06ff]/.test(p))).toBe(true);
      let several = 0;
      for (const p of prefixes.slice(0, 400)) {
        const terms = index.prefixTerms(p, 32)!;
        expect(terms.length).toBeGreaterThan(0);
        for (const t of terms) expect(t.startsWith(p)).toBe(true);
        if (terms.length > 1) {
          several++;
          expect(index.prefixTerms(p, 1)).toBeUndefined(); // more than asked for
        }
        const ids = (expr: string) => index.match(expr, 1_000_000).sort((a, b) => a - b);
        expect(ids(`(${terms.map((t) => `"${t}"`).join(' OR ')})`)).toEqual(ids(`"${p}"*`));
      }
      expect(several).toBeGreaterThan(5);
    } finally {
      index.close();
    }
    const r = await (await s.get('/maps/v1/autocomplete?q=Boulevar&lat=43.739&lng=7.427', H)).json();
    expect(r.data.predictions.length).toBeGreaterThan(0);
    for (const p of r.data.predictions) expect(p.name + ' ' + p.address).toMatch(/boulevard/i);
    const none = await s.get('/maps/v1/autocomplete?q=Qwertzuiop&lat=43.739&lng=7.427', H);
    expect(none.status).toBe(200);
    expect((await none.json()).data.predictions).toEqual([]);
  });

  it('finds the places near a point through the near tokens exactly as through the cell tokens', () => {
    expect(inspectDataDir(dir).places?.near_tokens).toBe(true); // svcmaps status says so: no re-import hint
    // a copy as imported before near tokens (no places_meta): status suggests importing the places again
    const older = mkdtempSync(join(tmpdir(), 'svcmaps-places-older-'));
    try {
      copyFileSync(join(dir, PLACES_FILE), join(older, PLACES_FILE));
      const db = openDb(join(older, PLACES_FILE));
      db.exec('DROP TABLE places_meta');
      db.close();
      const report = { ...inspectDataDir(older), server: { url: 'http://127.0.0.1:1', up: false } };
      expect(report.places?.near_tokens).toBe(false);
      expect(statusText(report)).toContain('imported before near tokens');
    } finally {
      rmSync(older, { recursive: true, force: true });
    }
    const index = new PlacesIndex(join(dir, PLACES_FILE));
    try {
      expect(index.nearTokens).toBe(true);
      const words = index.prefixTerms('', 1_000_000)!.filter((t) => [...t].length >= 3 && !t.startsWith('zq'));
      expect(words.some((w) => /[\u0600-\u06ff]/.test(w))).toBe(true);
      const ids = (expr: string) => index.match(expr, 1_000_000).sort((a, b) => a - b);
      // Monaco, Cairo, Giza and Amman (a place of the embedded gazetteer, carried over by the imports)
      const points = [
        [43.739, 7.427],
        [30.044, 31.236],
        [29.98, 31.13],
        [31.95, 35.93],
      ] as const;
      let found = 0;
      for (const w of words.filter((_, i) => i % 7 === 0).slice(0, 300))
        for (const n of [3, 4, 6]) {
          const typed = [...w].slice(0, n).join('');
          for (const [lat, lng] of points) {
            // the nine cells written out here, not taken from the code under test
            const cells: string[] = [];
            for (const dLat of [-1, 0, 1]) for (const dLng of [-1, 0, 1]) cells.push(cellToken(lat + dLat, lng + dLng));
            const want = ids(`("${typed}"*) AND (${cells.join(' OR ')})`);
            expect(ids(`("${typed}"*) AND (${nearExpression(lat, lng, typed)!})`)).toEqual(want);
            if (want.length) found++;
          }
        }
      expect(found).toBeGreaterThan(300);
      // whole words of two characters ("Im L", "Al S": the word before the one being typed) have theirs too
      expect(index.nearShortWords).toBe(true);
      const pairs = index.prefixTerms('', 1_000_000)!.filter((t) => [...t].length === 2);
      expect(pairs.length).toBeGreaterThan(20);
      let foundShort = 0;
      for (const w of pairs)
        for (const [lat, lng] of points) {
          const cells: string[] = [];
          for (const dLat of [-1, 0, 1]) for (const dLng of [-1, 0, 1]) cells.push(cellToken(lat + dLat, lng + dLng));
          const want = ids(`("${w}") AND (${cells.join(' OR ')})`);
          expect(ids(`("${w}") AND (${nearExpression(lat, lng, w, true)!})`)).toEqual(want);
          if (want.length) foundShort++;
        }
      expect(foundShort).toBeGreaterThan(10);
      // shorter than a near token, or not one token: no near expression (the caller uses the cells)
      expect(nearExpression(30, 31, 'ab')).toBeUndefined(); // a prefix being typed
      expect(nearExpression(30, 31, 'a', true)).toBeUndefined();
      expect(nearExpression(30, 31, 'ab-cd')).toBeUndefined();
    } finally {
      index.close();
    }
  });

  it('reverse geocodes a Monaco street to its name', async () => {
    const r = await (await s.post('/maps/v1/reverse', { lat: 43.7311, lng: 7.4197 }, H)).json();
    expect(r.data.source).toBe('fresh');
    expect(r.data.formatted_address).toMatch(/Monaco/);
    expect(r.data.place_id).toMatch(/^g_[0-9a-f]{16}$/);
  });

  it('finds Egyptian places by their Arabic names', async () => {
    const r = await (
      await s.get(`/maps/v1/autocomplete?q=${encodeURIComponent('صيدلية')}&lat=30.05&lng=31.24&locale=ar`, H)
    ).json();
    expect(r.data.predictions.length).toBeGreaterThan(3);
    for (const p of r.data.predictions.slice(0, 3))
      expect(haversineMeters(p, { lat: 30.05, lng: 31.24 })).toBeLessThan(30_000);
  });

  it('re-running an import replaces that source instead of duplicating it', async () => {
    const before = await (await s.get('/maps/v1/autocomplete?q=Casino&lat=43.739&lng=7.427', H)).json();
    const r = spawnSync(process.execPath, [...CLI, 'import', MONACO_PBF, '--data', dir, '--only', 'places'], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const again = await startPlacesServer(dir);
    const k = again.key().key;
    const after = await (
      await again.get('/maps/v1/autocomplete?q=Casino&lat=43.739&lng=7.427', { 'X-API-Key': k })
    ).json();
    await again.close();
    expect(after.data.predictions.map((p: Pred) => p.place_id)).toEqual(
      before.data.predictions.map((p: Pred) => p.place_id),
    );
  }, 120_000); // a full places import in a child process: tens of seconds on a busy 2-core machine
});
