import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPlacesServer, type TestServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';
import { signJwt } from '../../src/auth/jwt.js';

/*
 * Property-based fuzzing of every route with hostile paths, query strings, headers and bodies. A fixed seed keeps
 * `npm test` reproducible and under a minute; SVCMAPS_FUZZ_RUNS=5000 (and SVCMAPS_FUZZ_SEED) runs longer searches,
 * SVCMAPS_FUZZ_SHRINK=0 reports the first failure as found instead of shrinking it.
 */
const RUNS = Number(process.env.SVCMAPS_FUZZ_RUNS ?? 300);
const SEED = Number(process.env.SVCMAPS_FUZZ_SEED ?? 20261125);
// Below the ~10 s after which the uWS build closes a connection whose body upload stalls (see the README), so a
// request waiting for a body that never comes is answered 504 by the app rather than cut by the transport.
const REQUEST_TIMEOUT_MS = 5000;
/** Long runs get time in proportion (a cold tile or static map can take a second on a loaded machine). */
const TEST_TIMEOUT_MS = Math.max(600_000, RUNS * 1000);
const JWT_SECRET = 'jwt-secret-for-the-fuzz-suite-0123456789';

/** 5xx answers the spec defines (saturation, upstream failure, timeouts); anything else 5xx is a defect. */
const SPEC_5XX = new Set([
  'MAPS_AUTH_UNAVAILABLE',
  'MAPS_UNAVAILABLE',
  'AUTOCOMPLETE_BACKPRESSURE',
  'GEOCODE_BACKPRESSURE',
  'PLACE_BACKPRESSURE',
  'REVERSE_BACKPRESSURE',
  'DIRECTIONS_BACKPRESSURE',
  'AUTOCOMPLETE_UNAVAILABLE',
  'GEOCODE_UNAVAILABLE',
  'REVERSE_UNAVAILABLE',
  'PLACE_UNAVAILABLE',
  'AUTOCOMPLETE_FAILED',
  'GEOCODE_FAILED',
  'REVERSE_FAILED',
  'PLACE_FAILED',
  'VECTOR_TILES_NOT_SUPPORTED',
  'REQUEST_TIMEOUT',
  'RENDER_FAILED',
  'TILE_DEGRADED',
  'TILE_ORIGIN_FAILED',
  'TILE_ORIGIN_TIMEOUT',
]);
/** What must never reach a client: stack frames and paths on this machine. */
const LEAKS = [
  /\n\s+at \S/,
  /\bat [\w.<>]+ \(.*:\d+:\d+\)/,
  /\/work\//,
  /\/tmp\//,
  /node_modules/,
  /\/home\//,
  /file:\/\//,
];

interface Answer {
  status: number;
  headers: string;
  body: string;
}

/** One request on its own connection, bytes exactly as given (no client-side normalisation of `../` or `%2e`). */
function send(url: string, method: string, target: string, headers: [string, string][], body?: Buffer) {
  const { hostname, port } = new URL(url);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  if (body) lines.push(`Content-Length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return new Promise<Answer & { headBytes: number }>((resolve) => {
    const sock = connect(Number(port), hostname);
    let got = Buffer.alloc(0);
    // A wait, far past both the app's request timeout and the transport's cut of a stalled upload (~10 s): a request
    // the app does not answer is seen as cut by the transport (no answer) long before it.
    const limit = setTimeout(() => sock.destroy(), REQUEST_TIMEOUT_MS + 30_000);
    const finish = () => {
      clearTimeout(limit);
      const raw = got.toString('utf8');
      const at = raw.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
      resolve({
        status: m ? Number(m[1]) : 0,
        headers: at < 0 ? raw : raw.slice(0, at),
        body: at < 0 ? '' : raw.slice(at + 4),
        headBytes: head.length,
      });
    };
    sock.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const at = got.indexOf('\r\n\r\n');
      if (at < 0) return;
      // Complete once Content-Length bytes are in (none for HEAD, 204 and 304): uWS keeps some connections open after
      // the answer despite `Connection: close`, which is not the answer's latency.
      const text = got.subarray(0, at).toString('latin1');
      const len = /\r\ncontent-length: *(\d+)/i.exec(text);
      const bodyless = method === 'HEAD' || /^HTTP\/1\.1 (204|304)/.test(text);
      if (bodyless || (len && got.length - at - 4 >= Number(len[1]))) sock.destroy();
    });
    sock.on('error', () => undefined);
    sock.on('close', finish);
    sock.write(body ? Buffer.concat([head, body]) : head);
  });
}

/** The invariants every answer keeps; throws with the request and answer when one breaks. */
function check(what: string, a: Answer & { headBytes: number }) {
  const fail = (why: string) => {
    throw new Error(`${why}\nrequest: ${what.slice(0, 600)}\nanswer: ${a.status} ${a.body.slice(0, 400)}`);
  };
  // uWS closes (without an answer) request heads past its compiled-in limits; everything smaller gets an answer: from
  // the app, by request_timeout_ms at the latest, before the transport cuts a stalled request (~10 s).
  if (a.status === 0) {
    if (a.headBytes <= 4096) fail('no answer');
    return;
  }
  if (a.status >= 500) {
    let code: string;
    try {
      const j = JSON.parse(a.body) as { error?: { code?: string }; code?: string };
      code = j.error?.code ?? j.code ?? '';
    } catch {
      code = a.body === '' ? 'bare' : 'unparsable';
    }
    // Binary routes answer bare 502/503/504 for upstream trouble; a JSON 5xx must carry a spec code.
    const ok = code === 'bare' ? [502, 503, 504].includes(a.status) : SPEC_5XX.has(code);
    if (!ok || a.status === 500) fail(`5xx outside the spec (${code})`);
  }
  for (const re of LEAKS) if (re.test(a.body) || re.test(a.headers)) fail(`leaks ${re}`);
}

// --- generators -------------------------------------------------------------------------------------------------

const HOSTILE = [
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1e309',
  '1e-400',
  '0x1f',
  '-0',
  '9007199254740993',
  '',
  ' ',
  '"',
  '""',
  '*',
  'a*',
  'NEAR(',
  'NEAR(a b, 2)',
  '"unterminated',
  "'--",
  "' OR 1=1 --",
  '"; DROP TABLE api_keys; --',
  'x OR y AND NOT z',
  '^a',
  '{a b}:c',
  'col:value',
  '../',
  '../../../../etc/passwd',
  '..\\..\\windows',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%2f..%2f',
  '%00',
  '%0d%0a',
  '%0D%0ASet-Cookie:%20x=1',
  '%',
  '%zz',
  '%ff%fe',
  '%c0%ae%c0%ae',
  '\u0000',
  '\r\n',
  '😀',
  '\u202e\u0645',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '[]',
  '{}',
  '[object Object]',
  '__proto__',
  'constructor',
  '0,0',
  '91,181',
  '31.95,35.91,31.96,35.92',
  '1,2,3',
];

/** A value: hostile constant, arbitrary text, a number-ish string, or something long. */
const value = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 3, arbitrary: fc.string({ maxLength: 30, unit: 'binary' }) },
  { weight: 2, arbitrary: fc.double().map(String) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 12_000 }).map((n) => 'a'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 2000 }).map((n) => '31.9,35.9,'.repeat(n)) },
);

const URL_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/\\"<>{}|^`[\]]*$/;
/** Sent raw when it is a legal-ish request-target character run (to keep `%2e%2e`, `../`), else percent-encoded. */
const asUrl = (v: string, raw: boolean) => (raw && URL_SAFE.test(v) && !v.includes(' ') ? v : encodeURIComponent(v));

const segment = fc.tuple(value, fc.boolean()).map(([v, raw]) => asUrl(v, raw).replaceAll('?', '%3F'));

const PARAMS = [
  'q',
  'lat',
  'lng',
  'lon',
  'limit',
  'path',
  'w',
  'h',
  't',
  'fields',
  'language',
  'lang',
  'id',
  'place_id',
  'session_token',
  'format',
  'scale',
  'radius',
  'types',
  'bias',
  'location',
  'maxwidth',
  'photo_reference',
  'size',
];
const query = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...PARAMS), segment), value, fc.boolean()), { maxLength: 6 })
  .map((ps) => (ps.length ? '?' + ps.map(([k, v, raw]) => `${k}=${asUrl(v, raw)}`).join('&') : ''));

const path = fc.oneof(
  fc.constantFrom(
    '/livez',
    '/healthz',
    '/admin/metrics',
    '/maps/v1/autocomplete',
    '/maps/v1/geocode',
    '/maps/v1/reverse',
    '/maps/v1/place',
    '/maps/v1/place-photos',
    '/maps/v1/staticmap',
    '/maps/v1/directions',
    '/maps/v1/prefetch-directions',
    '/maps/v1/tile-token',
    '/maps/v1/style/svc',
    '/maps/v1/sprites/svc.json',
  ),
  segment.map((s) => `/maps/v1/place/${s}`),
  fc.tuple(segment, segment).map(([a, b]) => `/maps/v1/place-photo-files/${a}/${b}`),
  segment.map((s) => `/maps/v1/style/${s}`),
  fc.tuple(segment, segment).map(([a, b]) => `/maps/v1/glyphs/${a}/${b}`),
  segment.map((s) => `/maps/v1/sprites/${s}`),
  fc
    .tuple(
      fc.oneof(value, fc.nat(22).map(String)),
      value,
      value,
      fc.constantFrom('.png', '.jpg', '@2x.png', '', '.pbf'),
    )
    .map(([z, x, y, ext]) => `/maps/v1/tiles/${asUrl(z, false)}/${asUrl(x, false)}/${asUrl(y, false)}${ext}`),
  fc
    .nat(4)
    .chain((z) =>
      fc.tuple(fc.nat(2 ** z - 1), fc.nat(2 ** z - 1)).map(([x, y]) => `/maps/v1/tiles/${z}/${x}/${y}.png`),
    ),
  segment.map((s) => `/maps/v1/vector/${s}`),
  segment.map((s) => `/admin/keys/${s}`),
  fc.array(segment, { minLength: 0, maxLength: 5 }).map((ss) => '/' + ss.join('/')),
);

const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'];
const UWS_HEADER_NAME = /^[0-9A-Za-z-]+$/;
/** Header values: any byte a client may legally send (no CR, LF or NUL; obs-text allowed). */
const headerValue = fc
  .oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 200 }))
  .map((v) => v.replace(/[\r\n\0]/g, ' ').replace(/[^\t\x20-\x7e\x80-\xff]/g, '?'));
const extraHeaders = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom(
        'If-None-Match',
        'X-Request-ID',
        'X-Svc-Prefetch',
        'X-Forwarded-For',
        'Content-Type',
        'Accept-Encoding',
        'Origin',
        'Range',
        'Transfer-Encoding',
        'Expect',
        'Authorization',
        'X-API-Key',
      ),
      // The bundled uWS drops (no answer, ~10 s later) a request with any other header-name character, legal tchars
      // such as `_` and `.` included: a transport limit the README lists, not something the app can answer.
      fc.string({ minLength: 1, maxLength: 20 }).filter((k) => UWS_HEADER_NAME.test(k)),
    ),
    headerValue,
  ),
  { maxLength: 8 },
);

const bodies = fc.oneof(
  fc.json().map((j) => Buffer.from(j)),
  fc
    .record({
      origin: fc.oneof(fc.record({ lat: fc.double(), lng: fc.double() }), fc.constant('x'), fc.constant(null)),
      destination: fc.oneof(fc.record({ lat: fc.double(), lng: fc.double() }), fc.constant([])),
      waypoints: fc.array(fc.record({ lat: fc.double(), lng: fc.double() }), { maxLength: 6 }),
      lat: fc.oneof(fc.double(), fc.constantFrom(...HOSTILE)),
      lng: fc.oneof(fc.double(), fc.constantFrom(...HOSTILE)),
      address: fc.constantFrom(...HOSTILE),
      enrich_maneuvers: fc.anything(),
    })
    .map((o) => Buffer.from(JSON.stringify(o))),
  fc.constantFrom(...HOSTILE).map((h) => Buffer.from(h)),
  fc
    .tuple(fc.integer({ min: 1000, max: 200_000 }), fc.constantFrom('[', '{"a":', '[{"b":'))
    .map(([d, open]) => Buffer.from(open.repeat(d))),
  fc.integer({ min: 1000, max: 50_000 }).map((d) => Buffer.from('['.repeat(d) + ']'.repeat(d))),
  fc.integer({ min: 100_000, max: 1_300_000 }).map((n) => Buffer.alloc(n, 0x7b)),
  fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)),
);

describe('fuzzing every route', () => {
  let s: TestServer;
  let dir: string;
  let creds: Record<string, [string, string][]>;
  let token: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-fuzz-'));
    s = await startPlacesServer(dir, {
      auth: { jwt_secret: JWT_SECRET },
      http: { request_timeout_ms: REQUEST_TIMEOUT_MS },
      tiles: { render_threads: 1 },
    });
    const user = s.key({ perMinute: 1_000_000, daily: 1_000_000 });
    const admin = s.key({ perMinute: 1_000_000, daily: 1_000_000, role: 'super_admin' });
    token = await tileToken(s);
    const jwt = signJwt({ sub: 'fuzz', exp: Math.floor(Date.now() / 1000) + 3600 }, Buffer.from(JWT_SECRET));
    creds = {
      none: [],
      key: [['X-API-Key', user.key]],
      admin: [['X-API-Key', admin.key]],
      jwt: [['Authorization', `Bearer ${jwt}`]],
      forged: [['X-API-Key', user.key.slice(0, -1) + (user.key.endsWith('A') ? 'B' : 'A')]],
      bearerJunk: [['Authorization', 'Bearer a.b.c']],
    };
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const auth = fc.constantFrom('none', 'key', 'key', 'admin', 'jwt', 'forged', 'bearerJunk', 'token');
  const target = (p: string, q: string, a: string) =>
    a === 'token' ? `${p}${q ? q + '&' : '?'}t=${token}` : `${p}${q}`;

  it(
    'answers hostile paths, query strings and headers within the spec',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          path,
          query,
          fc.oneof({ weight: 4, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
          auth,
          extraHeaders,
          async (p, q, method, a, extra) => {
            const t = target(p, q, a);
            const headers = [...(creds[a] ?? []), ...extra];
            check(`${method} ${t} ${JSON.stringify(headers)}`, await send(s.url, method, t, headers));
          },
        ),
        { numRuns: RUNS, seed: SEED, endOnFailure: process.env.SVCMAPS_FUZZ_SHRINK === '0' },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'answers hostile bodies on every route that reads one',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(
            '/maps/v1/geocode',
            '/maps/v1/reverse',
            '/maps/v1/directions',
            '/maps/v1/prefetch-directions',
            '/maps/v1/tile-token',
            '/admin/keys/key_0123456789abcdef',
          ),
          fc.constantFrom('POST', 'POST', 'POST', 'DELETE', 'PUT'),
          auth,
          fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-16', ''),
          bodies,
          async (p, method, a, type, body) => {
            const headers: [string, string][] = [...(creds[a] ?? [])];
            if (type) headers.push(['Content-Type', type]);
            const what = `${method} ${p} ${JSON.stringify(headers)} body ${body.length} B: ${body.subarray(0, 80).toString('latin1')}`;
            check(what, await send(s.url, method, target(p, '', a), headers, body));
          },
        ),
        { numRuns: Math.ceil(RUNS / 2), seed: SEED, endOnFailure: process.env.SVCMAPS_FUZZ_SHRINK === '0' },
      );
    },
    TEST_TIMEOUT_MS,
  );

  it('still answers /livez after the run', async () => {
    const r = await fetch(`${s.url}/livez`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });
});
