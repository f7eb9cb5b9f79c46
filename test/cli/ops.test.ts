import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createElement } from 'react';
import { render } from 'ink-testing-library';
import { Ajv } from 'ajv';
import { cliWithEnv as cli } from '../helpers/cli.js';
import { QuotasView } from '../../src/cli/ui/quotas-view.js';
import type { QuotaSnapshot } from '../../src/ops/quotas.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { startPlacesServer, type TestServer } from '../helpers/app.js';
import { PlacesIndex } from '../../src/store/places/index-db.js';
import { PLACES_FILE } from '../../src/store/places/schema.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const closedPort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });

describe('status and quotas over a live data directory', () => {
  let s: TestServer;
  let data: string;
  let fleet: { id: string; key: string };
  let idle: { id: string; key: string };
  /** When the requests of `fleet` began, to the second. */
  let requestsFrom: number;
  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'svcmaps-ops-'));
    // the tile and the map take as long as they need: on a busy machine the render threads' start-up alone can
    // outlast the default tiles.timeout_ms
    s = await startPlacesServer(data, { tiles: { timeout_ms: 120_000 }, http: { request_timeout_ms: 120_000 } });
    fleet = s.key({ name: 'fleet', plan: 'pro', perMinute: 120, daily: 4 });
    idle = s.key({ name: 'idle' });
    const h = { 'X-API-Key': fleet.key };
    requestsFrom = Math.floor(Date.now() / 1000) * 1000;
    for (const q of ['amman', 'irbid', 'amman'])
      expect((await s.get(`/maps/v1/autocomplete?q=${q}`, h)).status).toBe(200);
    expect((await s.get('/maps/v1/tiles/2/2/1.png', h)).status).toBe(200);
    expect((await s.get('/maps/v1/staticmap?path=31.95,35.91,31.97,35.89&w=64&h=64', h)).status).toBe(200);
    await sleep(300); // meter and warm tile store flush
  }, 120_000);
  afterAll(async () => {
    await s?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('status: places sources, graph, tile pyramid per zoom, disk use, and the server it probed', async () => {
    const r = await cli({}, 'status', '--data', data, '--url', s.url);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(new RegExp(`^data directory  ${data} \\([\\d.]+ MB used, [\\d.]+ [kMG]?B free\\)\\n`));
    expect(r.out).toContain(`server          up at ${s.url} — database ok, cache ok\n`);
    expect(r.out).toContain('api keys        2 (2 active)');
    expect(r.out).toMatch(/^ {2}geonames +\d{3},\d{3} rows {2}imported \d{4}-\d\d-\d\dT.*\(cities500\)$/m);
    expect(r.out).toContain('road graph      none imported');
    // the embedded gazetteer alone needs no near tokens: no re-import hint either way
    expect(r.out).not.toContain('near tokens');
    expect(r.out).toMatch(/^tile pyramid {4}tiles\.mbtiles \(256 px\)/m);
    expect(r.out).toMatch(/^ +2 +1 +[\d.]+ k?B$/m); // zoom 2: one tile stored
    const j = JSON.parse((await cli({}, 'status', '--data', data, '--url', s.url, '--json')).out);
    expect(j.places.sources[0]).toMatchObject({ source: 'geonames', file: 'cities500' });
    // as the search reads it (an embedded gazetteer built before near tokens has none, one built since has them)
    const index = new PlacesIndex(join(data, PLACES_FILE));
    expect(j.places.near_tokens).toBe(index.nearTokens);
    index.close();
    expect(j.tiles[0].zooms.find((z: { z: number }) => z.z === 2)).toMatchObject({ tiles: 1 });
    expect(j.server).toMatchObject({ up: true, health: { postgres: 'ok', redis: 'ok', svc_wired: true } });
    expect(j.disk.used_bytes).toBeGreaterThan(j.places.bytes);
  });

  it('status exits 3 when no server answers, and 1 when the data directory does not exist', async () => {
    const down = await cli({}, 'status', '--data', data, '--url', `http://127.0.0.1:${await closedPort()}`);
    expect(down.code).toBe(3);
    expect(down.out).toMatch(/^server {10}DOWN at http:\/\/127\.0\.0\.1:\d+ — ECONNREFUSED$/m);
    const none = await cli({}, 'status', '--data', join(data, 'nope'));
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/^svcmaps: data directory .* does not exist/);
  });

  it('quotas: per key and bucket against the daily quota, with plan, rate limit and last seen', async () => {
    const r = await cli({}, 'quotas', '--data', data);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toMatch(/^Usage on \d{4}-\d\d-\d\d \(UTC\)/);
    expect(lines[2]).toMatch(/^KEY +NAME +PLAN +STATE +GATHER +TILES +USED +TILE REQS +REQ\/MIN +LAST SEEN$/);
    const row = lines.find((l) => l.startsWith(fleet.id))!;
    // 3 autocompletes, 2 distinct (the repeat is a cache hit); 1 staticmap miss; daily quota 4.
    expect(row).toMatch(/ fleet +pro +active +2\/4 +1\/4 +50% +1 +-\/120 +\d+[smh] ago$/);
    expect(lines.find((l) => l.startsWith(idle.id))).toMatch(/ 0\/100,000 +0\/100,000 +0% +0 +-\/1000 +never$/);

    const j = JSON.parse((await cli({}, 'quotas', '--data', data, '--key', fleet.id, '--json')).out) as QuotaSnapshot;
    expect(j.keys).toHaveLength(1);
    expect(j.keys[0]).toMatchObject({
      id: fleet.id,
      plan: 'pro',
      per_minute: 120,
      daily: 4,
      used: 0.5,
      buckets: { gather: { requests: 3, misses: 2 }, tiles: { requests: 1, misses: 1 }, tile_family: { requests: 1 } },
    });
    // seen during this run's requests (last_seen is kept to the second)
    const seen = Date.parse(j.keys[0]!.last_seen!);
    expect(seen).toBeGreaterThanOrEqual(requestsFrom);
    expect(seen).toBeLessThanOrEqual(Date.now());

    const bad = await cli({}, 'quotas', '--data', data, '--key', 'key_0000000000000000');
    expect(bad).toMatchObject({ code: 1, err: 'svcmaps: No API key with id key_0000000000000000\n' });
    expect((await cli({}, 'quotas', '--data', data, '--watch')).err).toContain('--watch needs a terminal');
  });
});

describe('quotas --watch live view (ink)', () => {
  const snap = (i: number): QuotaSnapshot => ({
    day: '2026-11-23',
    at: 1_000_000 + i * 1000,
    keys: [
      {
        id: 'key_00000000000000aa',
        name: 'fleet',
        plan: 'pro',
        state: 'active',
        per_minute: 600,
        daily: 100,
        requests: 10 + 5 * i,
        used: 0.92,
        last_seen: new Date(1_000_000 + i * 1000).toISOString(),
        buckets: {
          gather: { requests: 10, misses: 92 },
          tiles: { requests: 0, misses: 0 },
          tile_family: { requests: 5 * i, misses: 0 },
        },
      },
    ],
  });

  it('redraws every interval with the request rate between samples, and quits on q', async () => {
    let i = 0;
    const view = render(createElement(QuotasView, { load: () => snap(i++), intervalMs: 30 }));
    expect(view.lastFrame()).toContain('svcmaps quotas — 2026-11-23 (UTC) — 1 key');
    expect(view.lastFrame()).toMatch(/ -\/600 /); // no rate before a second sample
    await sleep(120);
    const frame = view.lastFrame()!;
    expect(frame).toMatch(/key_00000000000000aa +fleet +pro +active +92\/100 +0\/100 +92%/);
    expect(frame).toMatch(/ 300\/600 +0s ago/); // 5 requests per 1 s sample
    view.stdin.write('q');
    await sleep(20);
    const frames = view.frames.length;
    await sleep(100);
    expect(view.frames.length).toBe(frames); // stopped redrawing
    view.unmount();
  });
});

describe('svcmaps config', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-cfg-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('check: valid file plus env overrides, effective config with secrets redacted', async () => {
    const file = join(dir, 'ok.json');
    writeFileSync(
      file,
      JSON.stringify({
        port: 9000,
        auth: { jwt_secret: 'x'.repeat(40) },
        metrics: { port: 9464 },
        cluster: {
          tile_token_secret: 'e'.repeat(64),
          postgres_url: 'postgres://maps:pgpass-zz@db.internal:5432/maps',
          redis_url: 'redis://:redispass-zz@cache.internal:6379',
        },
      }),
    );
    const r = await cli(
      { SVCMAPS_HOST: '0.0.0.0', SVCMAPS_DATA: '/srv/maps' },
      'config',
      'check',
      '--config',
      file,
      '--print',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(
      `config file: ${file}\nenvironment: SVCMAPS_HOST sets host\nenvironment: SVCMAPS_DATA sets data_dir\n`,
    );
    expect(r.out).toContain('✓ configuration is valid (data directory /srv/maps, listening on 0.0.0.0:9000)');
    const effective = JSON.parse(r.out.slice(r.out.indexOf('{')));
    expect(effective).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      metrics: { port: 9464, host: '127.0.0.1' },
      auth: { jwt_secret: '(set, redacted)' },
      cluster: {
        tile_token_secret: '(set, redacted)',
        postgres_url: 'postgres://maps:redacted@db.internal:5432/maps',
        redis_url: 'redis://:redacted@cache.internal:6379',
      },
    });
    expect(r.out).not.toContain('pass-zz');
    expect(r.out).not.toContain('xxxxxxxx');
    expect(r.out).not.toContain('eeeeeeee');
  });

  it('check: reports every problem with where it came from, unknown keys with a suggestion, exit 1', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ port: 70000, limits: { per_minite: 3 }, metrcs: {}, tiles: { origin: 'wms' } }),
    );
    const r = await cli({ SVCMAPS_HTTP__REQUEST_TIMEOUT_MS: 'soon' }, 'config', 'check', '--config', file, '--json');
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.ok).toBe(false);
    expect(j.issues).toEqual(
      expect.arrayContaining([
        { origin: 'file', path: 'metrcs', message: 'unknown key (did you mean "metrics"?)' },
        { origin: 'file', path: 'limits.per_minite', message: 'unknown key (did you mean "default_per_minute"?)' },
        { origin: 'file', path: 'port', message: 'must be <= 65535' },
        {
          origin: 'file',
          path: 'tiles.origin',
          message: 'must be equal to one of the allowed values: render, xyz, mbtiles, none',
        },
        { origin: 'environment', path: 'http.request_timeout_ms', message: 'must be integer' },
      ]),
    );
    expect(r.err).toBe('svcmaps: configuration has 5 problems\n');
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"port": ');
    const b = await cli({}, 'config', 'check', '--config', broken);
    expect(b.code).toBe(1);
    expect(b.out).toMatch(/✗ file: \(file\): .*JSON/);
  });

  it('schema: a JSON Schema with defaults that accepts the defaults and rejects unknown keys', async () => {
    const r = await cli({}, 'config', 'schema');
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.properties.http.properties.shutdown_grace_ms.default).toBe(30_000);
    expect(schema.properties.metrics.properties.port.default).toBe(0);
    expect(schema.properties.log.properties.requests).toEqual({
      type: 'boolean',
      default: true,
      description: expect.stringMatching(/access-log line/),
    });
    const validate = new Ajv({ strict: false }).compile(schema);
    expect(validate(DEFAULTS)).toBe(true);
    expect(validate({ metrics: { prot: 1 } })).toBe(false);
  });
});
