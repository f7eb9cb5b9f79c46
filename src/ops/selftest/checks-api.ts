import { expect, expectStatus } from './client.js';

/** The parts of a directions answer the check reads. */
interface DirectionsData {
  partial?: boolean;
  source: string;
  polyline: string;
  routes?: unknown[];
  distance_meters: number;
  duration_seconds: number;
  engine?: string;
}
import { Skip, type Check } from './types.js';

// Amman: in the embedded gazetteer with English and Arabic names, so every fresh data directory can answer.
const AMMAN = { lat: 31.9539, lng: 35.9106 };
const near = (a: { lat: number; lng: number }, b: { lat: number; lng: number }, deg: number) =>
  Math.abs(a.lat - b.lat) < deg && Math.abs(a.lng - b.lng) < deg;
const arabicFold = (s: string) => s.replace(/[\u064B-\u065F\u0670\u0640]/g, '').replace(/[أإآٱ]/g, 'ا');
const rand = () => Math.random().toString(36).slice(2, 10);

export const apiChecks: Check[] = [
  {
    id: 'health',
    label: 'health (/livez, /healthz)',
    async run({ client }) {
      const live = await client.get('/livez', { key: null });
      expectStatus(live, 200, '/livez');
      const h = await client.get('/healthz', { key: null });
      const j = h.json<{ postgres: string; redis: string; svc_wired: boolean }>();
      expect(
        h.status === 200,
        `/healthz answered ${h.status}: database ${j.postgres}, cache ${j.redis}, engine ${j.svc_wired ? 'on' : 'off'}`,
      );
      return `database ${j.postgres}, cache ${j.redis}`;
    },
  },
  {
    id: 'auth',
    label: 'auth: keys and headers',
    async run({ client }) {
      expectStatus(await client.get('/maps/v1/autocomplete?q=a', { key: null }), 401, 'no key', 'MISSING_TOKEN');
      expectStatus(
        await client.get('/maps/v1/autocomplete?q=a', { key: `cmk_live_${'A'.repeat(32)}` }),
        401,
        'unknown key',
        'INVALID_API_KEY',
      );
      expectStatus(await client.get('/maps/v1/tiles/0/0/0.png', { key: null }), 401, 'anonymous tile', 'AUTH_REQUIRED');
      const rid = crypto.randomUUID();
      const ok = await client.get('/maps/v1/autocomplete?q=', { headers: { 'X-Request-ID': rid } });
      expectStatus(ok, 200, 'valid key');
      expect(ok.headers.get('x-request-id') === rid, 'X-Request-ID was not echoed');
      expect(ok.headers.get('x-content-type-options') === 'nosniff', 'security headers missing');
      return 'missing, unknown and anonymous refused; valid key accepted';
    },
  },
  {
    id: 'tokens',
    label: 'tile tokens',
    async run(t) {
      const key = t.makeKey ? t.makeKey({ name: 'selftest-token' }) : undefined;
      const c = t.client;
      const minted = await c.post('/maps/v1/tile-token', undefined, key ? { key: key.key } : undefined);
      expectStatus(minted, 200, 'mint');
      const { token, expires_at } = minted.json<{ data: { token: string; expires_at: string } }>().data;
      const hours = (Date.parse(expires_at) - Date.now()) / 3600_000;
      expect(typeof token === 'string' && token.length > 20 && hours > 0, `bad token answer (expires ${expires_at})`);
      expectStatus(await c.get(`/maps/v1/sprites/s.json?t=${token}`, { key: null }), 200, 'token on the tile family');
      expectStatus(await c.get(`/maps/v1/autocomplete?q=a&t=${token}`, { key: null }), 401, 'token on a JSON endpoint');
      const flipped = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
      expectStatus(
        await c.get(`/maps/v1/sprites/s.json?t=${flipped}`, { key: null }),
        401,
        'tampered token',
        'INVALID_TOKEN',
      );
      if (!key || !t.adminKey) return `minted, valid ${hours.toFixed(1)} h; accepted on tiles only; tampering refused`;
      const revoked = await c.request('DELETE', `/admin/keys/${key.id}`, { key: t.adminKey });
      expectStatus(revoked, 200, 'revoke through /admin/keys');
      expectStatus(
        await c.get(`/maps/v1/sprites/s.json?t=${token}`, { key: null }),
        401,
        'token of a revoked key',
        'API_KEY_REVOKED',
      );
      return `minted, valid ${hours.toFixed(1)} h; tiles only; tampering refused; dead on revoke`;
    },
  },
  {
    id: 'limits',
    label: 'limits: rate and daily quota',
    async run(t) {
      if (!t.makeKey) {
        const r = await t.client.get('/maps/v1/autocomplete?q=');
        expect(r.headers.get('ratelimit-limit'), 'no RateLimit-Limit header');
        return `headers only (limit ${r.headers.get('ratelimit-limit')}/min, ${r.headers.get('ratelimit-remaining')} left); a live key is never exhausted`;
      }
      const fast = t.makeKey({ perMinute: 3, name: 'selftest-rate' });
      const codes: number[] = [];
      let last = await t.client.get('/maps/v1/autocomplete?q=', { key: fast.key });
      codes.push(last.status);
      for (let i = 1; i < 4; i++)
        codes.push((last = await t.client.get('/maps/v1/autocomplete?q=', { key: fast.key })).status);
      expect(codes.join() === '200,200,200,429', `4 requests at 3/min answered ${codes.join(', ')}`);
      expect(
        last.code() === 'RATE_LIMIT_EXCEEDED' && Number(last.headers.get('retry-after')) > 0,
        '429 without RATE_LIMIT_EXCEEDED and Retry-After',
      );
      const daily = t.makeKey({ daily: 1, name: 'selftest-quota' });
      expectStatus(await t.client.get(`/maps/v1/autocomplete?q=zq${rand()}`, { key: daily.key }), 200, 'first miss');
      const over = await t.client.get(`/maps/v1/autocomplete?q=zq${rand()}`, { key: daily.key });
      expectStatus(over, 429, 'second miss at 1/day', 'MAPS_QUOTA_EXCEEDED');
      expect(over.headers.get('retry-after') === '3600', 'quota 429 without Retry-After 3600');
      return '4th request at 3/min refused; 2nd miss at 1/day refused';
    },
  },
  {
    id: 'autocomplete-en',
    label: 'autocomplete (English)',
    async run({ client }) {
      const r = await client.get(`/maps/v1/autocomplete?q=amma&lat=${AMMAN.lat}&lng=${AMMAN.lng}&locale=en`);
      expectStatus(r, 200, 'autocomplete');
      const d = r.json<{
        data: { predictions: Array<{ name: string; lat?: number; lng?: number }>; source: string };
      }>().data;
      const hit = d.predictions.find((p) => /amman/i.test(p.name));
      expect(
        hit,
        `"amma" did not suggest Amman (got: ${
          d.predictions
            .slice(0, 3)
            .map((p) => p.name)
            .join(', ') || 'nothing'
        })`,
      );
      expect(
        hit.lat !== undefined && near(hit as { lat: number; lng: number }, AMMAN, 0.3),
        'Amman suggested at the wrong place',
      );
      const again = (
        await client.get(`/maps/v1/autocomplete?q=amma&lat=${AMMAN.lat}&lng=${AMMAN.lng}&locale=en`)
      ).json<{ data: { source: string } }>().data.source;
      return `"amma" → ${hit.name} (${d.predictions.length} predictions, ${d.source}; repeat from ${again})`;
    },
  },
  {
    id: 'autocomplete-ar',
    label: 'autocomplete (Arabic)',
    async run({ client }) {
      const r = await client.get(`/maps/v1/autocomplete?q=${encodeURIComponent('عما')}&locale=ar&country=jo`);
      expectStatus(r, 200, 'autocomplete');
      const d = r.json<{ data: { predictions: Array<{ name: string }> } }>().data;
      const hit = d.predictions.find((p) => arabicFold(p.name).includes('عمان'));
      expect(
        hit,
        `"عما" did not suggest عمان (got: ${
          d.predictions
            .slice(0, 3)
            .map((p) => p.name)
            .join('، ') || 'nothing'
        })`,
      );
      return `"عما" → ${hit.name}`;
    },
  },
  {
    id: 'places-imported',
    label: 'search: imported places',
    async run(t) {
      if (!t.importedPlaces) return new Skip('only checked on a data directory copy (--data)');
      if (!t.importedPlaces.length)
        return new Skip('no places extract imported (svcmaps import <file.osm.pbf | .geojsonl>)');
      const found: string[] = [];
      for (const p of t.importedPlaces) {
        const r = await t.client.get(`/maps/v1/autocomplete?q=${encodeURIComponent(p.name)}&lat=${p.lat}&lng=${p.lng}`);
        expectStatus(r, 200, 'autocomplete');
        const names = r.json<{ data: { predictions: Array<{ name: string }> } }>().data.predictions.map((x) => x.name);
        expect(
          names.some((n) => n.toLowerCase() === p.name.toLowerCase()),
          `"${p.name}" from ${p.source} is not found (got: ${names.slice(0, 3).join(', ') || 'nothing'})`,
        );
        found.push(`"${p.name}" (${p.source})`);
      }
      return `found ${found.join(', ')}`;
    },
  },
  {
    id: 'geocode',
    label: 'geocode',
    async run({ client }) {
      const r = await client.post('/maps/v1/geocode', { address: 'Amman' });
      expectStatus(r, 200, 'geocode');
      const d = r.json<{ data: { matched: boolean; lat: number; lng: number; source: string } }>().data;
      expect(d.matched === true, '"Amman" did not match');
      expect(near(d, AMMAN, 0.3), `"Amman" geocoded to ${d.lat},${d.lng}`);
      return `"Amman" → ${d.lat.toFixed(4)},${d.lng.toFixed(4)} (${d.source})`;
    },
  },
  {
    id: 'reverse',
    label: 'reverse geocode',
    async run({ client }) {
      const r = await client.post('/maps/v1/reverse', AMMAN);
      expectStatus(r, 200, 'reverse');
      const d = r.json<{ data: { source: string; formatted_address?: string } }>().data;
      expect(
        d.source !== 'no_address' && d.formatted_address,
        `no address at ${AMMAN.lat},${AMMAN.lng} (source ${d.source})`,
      );
      expectStatus(await client.post('/maps/v1/reverse', { lat: 0, lng: 35 }), 400, 'lat 0', 'VALIDATION_ERROR');
      return `${AMMAN.lat},${AMMAN.lng} → ${d.formatted_address} (${d.source})`;
    },
  },
  {
    id: 'directions',
    label: 'directions on imported roads',
    async run(t) {
      if (t.routePairs === null) return new Skip('no road graph imported (svcmaps import <file.osm.pbf>)');
      const pairs = t.routePairs ?? [
        [
          [31.9539, 35.9106],
          [31.97, 35.89],
        ],
      ];
      let lastProblem = '';
      for (const [[olat, olng], [dlat, dlng]] of pairs) {
        const r = await t.client.post('/maps/v1/directions', {
          origin_lat: olat,
          origin_lng: olng,
          dest_lat: dlat,
          dest_lng: dlng,
        });
        if (r.status === 422) {
          lastProblem = `${olat.toFixed(4)},${olng.toFixed(4)} → ${dlat.toFixed(4)},${dlng.toFixed(4)} unroutable`;
          continue;
        }
        expectStatus(r, 200, 'directions');
        const d = r.json<{ data: DirectionsData }>().data;
        if (d.partial || d.source === 'server_straight') {
          lastProblem = 'answered the degraded straight line';
          continue;
        }
        const line = JSON.parse(d.polyline) as { type: string; coordinates: unknown[] };
        expect(
          (d.routes?.length ?? 0) >= 1 && line.type === 'LineString' && line.coordinates.length >= 2,
          'route without a LineString polyline',
        );
        return `${(d.distance_meters / 1000).toFixed(1)} km, ${Math.round(d.duration_seconds / 60)} min, ${line.coordinates.length} points (${d.engine ?? 'engine ?'}, ${d.source})`;
      }
      if (t.mode === 'remote' && !t.routePairs)
        return new Skip(
          `no road route in Amman on this server (${lastProblem}); pass --route lat,lng,lat,lng inside its graph`,
        );
      throw new Error(`road graph imported but no route: ${lastProblem}`);
    },
  },
];
