import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startServer, SECURITY_HEADERS, errorCode, type TestServer } from '../helpers/app.js';
import type { PlacesService } from '../../src/places/types.js';
import { emptyPlaces } from '../../src/places/empty.js';

function expectSecurityHeaders(res: Response) {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(res.headers.get(k), k).toBe(v);
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
}

/** A places engine whose autocomplete never answers (to fire the whole-request timeout) or throws raw errors. */
const misbehaving: PlacesService = {
  ...emptyPlaces,
  autocomplete: (r) =>
    r.q === 'hang' ? new Promise(() => {}) : Promise.reject(new Error('db file /secret/path corrupted')),
};

describe('HTTP contract', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer({ http: { request_timeout_ms: 400, body_limit_bytes: 4096 } }, { places: misbehaving });
    key = s.key().key;
  });
  afterAll(() => s?.close());

  it('sends the security headers and a request id on success, error and bare responses', async () => {
    const responses = [
      await s.get('/livez'),
      await s.get('/nope'),
      await s.get('/maps/v1/autocomplete?q=x'),
      await s.get('/maps/v1/tiles/99/0/0.png', { 'X-API-Key': key }),
      await s.post('/maps/v1/geocode', 'not json', { 'X-API-Key': key }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 404, 401, 400, 400]);
    responses.forEach(expectSecurityHeaders);
  });

  it('echoes a well-formed X-Request-ID and replaces anything else', async () => {
    const id = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    expect((await s.get('/livez', { 'X-Request-ID': id })).headers.get('x-request-id')).toBe(id);
    const other = await s.get('/livez', { 'X-Request-ID': 'not-a-uuid<script>' });
    expect(other.headers.get('x-request-id')).not.toContain('script');
    expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('answers HEAD with the GET headers and length but no body, when answered at once and after an await', async () => {
    // Refused before any await (no key): the adapter writes the reply inside the uWS handler.
    const refused = await fetch(s.url + '/maps/v1/autocomplete?q=x', { method: 'HEAD' });
    expect(refused.status).toBe(401);
    expect(Number(refused.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await refused.text()).toBe('');
    const live = await fetch(s.url + '/livez', { method: 'HEAD' });
    expect(live.status).toBe(200);
    expect(await live.text()).toBe('');
    expectSecurityHeaders(live);
  });

  it('answers unknown routes 404 and wrong methods 405, in the envelope', async () => {
    const r = await s.get('/maps/v1/nothing-here', { 'X-API-Key': key });
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND' } });
    const m = await fetch(s.url + '/maps/v1/geocode', { headers: { 'X-API-Key': key } });
    expect(m.status).toBe(405);
    expect(m.headers.get('allow')).toBe('POST');
  });

  it('rejects bodies over the limit with 413 in the envelope, declared or streamed', async () => {
    const big = JSON.stringify({ address: 'x'.repeat(5000) });
    const r = await s.post('/maps/v1/geocode', big, { 'X-API-Key': key });
    expect(r.status).toBe(413);
    expect(await errorCode(r)).toBe('PAYLOAD_TOO_LARGE');
    // Chunked upload with no Content-Length: the limit is enforced while streaming.
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(s.url + '/maps/v1/geocode');
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: { 'X-API-Key': key, 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write('x'.repeat(1000));
      req.end();
    });
    expect(status).toBe(413);
  });

  it('names the field for a non-JSON or non-object body', async () => {
    for (const body of ['{bad', '[1,2]', '']) {
      const r = await s.post('/maps/v1/reverse', body, { 'X-API-Key': key });
      expect(r.status).toBe(400);
      const j = (await r.json()) as { error: { code: string; message: string }; message: string };
      expect(j.error.code).toBe('VALIDATION_ERROR');
      expect(j.error.message).toMatch(/^body:/);
      expect(j.message).toBe(j.error.message);
    }
  });

  it('fires the whole-request timeout as 504 REQUEST_TIMEOUT without a top-level message', async () => {
    const r = await s.get('/maps/v1/autocomplete?q=hang', { 'X-API-Key': key });
    expect(r.status).toBe(504);
    const j = (await r.json()) as Record<string, unknown>;
    expect(j).toMatchObject({ status: 'error', error: { code: 'REQUEST_TIMEOUT' } });
    expect(j).not.toHaveProperty('message');
    expectSecurityHeaders(r);
  });

  it('sanitises 5xx bodies: generic message, request id in details, no internals', async () => {
    const id = '11111111-2222-4333-8444-555555555555';
    const r = await s.get('/maps/v1/autocomplete?q=boom', { 'X-API-Key': key, 'X-Request-ID': id });
    expect(r.status).toBe(502);
    const text = await r.text();
    expect(text).not.toContain('/secret/path');
    expect(JSON.parse(text)).toEqual({
      status: 'error',
      error: {
        code: 'AUTOCOMPLETE_FAILED',
        message: 'An internal error occurred. Please try again later.',
        details: { request_id: id },
      },
      message: 'An internal error occurred. Please try again later.',
    });
  });

  it('answers CORS preflights before auth and exposes headers on /maps/v1', async () => {
    const r = await fetch(s.url + '/maps/v1/autocomplete', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-allow-headers')).toContain('X-API-Key');
    expect(r.headers.get('access-control-allow-methods')).toContain('GET');
    const g = await s.get('/maps/v1/autocomplete?q=', { 'X-API-Key': key });
    expect(g.headers.get('access-control-allow-origin')).toBe('*');
    expect(g.headers.get('access-control-expose-headers')).toContain('X-Request-ID');
  });
});

describe('engine switched off', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ engine_enabled: false });
  });
  afterAll(() => s?.close());

  it('answers every /maps/v1 route 503 MAPS_UNAVAILABLE and keeps health endpoints up', async () => {
    const key = s.key().key;
    for (const [method, path] of [
      ['GET', '/maps/v1/autocomplete?q=a'],
      ['POST', '/maps/v1/directions'],
      ['GET', '/maps/v1/tiles/0/0/0.png'],
      ['GET', '/maps/v1/style/svc'],
      ['POST', '/maps/v1/tile-token'],
    ]) {
      const r = await fetch(s.url + path, { method, headers: { 'X-API-Key': key } });
      expect(r.status, path).toBe(503);
      expect(await errorCode(r)).toBe('MAPS_UNAVAILABLE');
    }
    expect((await s.get('/livez')).status).toBe(200);
    const h = await s.get('/healthz');
    expect(h.status).toBe(503);
    expect(await h.json()).toMatchObject({ postgres: 'ok', redis: 'ok', svc_wired: false });
  });
});
