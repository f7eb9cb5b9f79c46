import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CountedHistogram, createMetricsRegistry, LatencyCounts } from '../../src/ops/metrics.js';
import { RequestMetrics } from '../../src/ops/request-metrics.js';
import { createServer, type AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startPlacesServer, startServer, type TestServer } from '../helpers/app.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { jsonLogger, maskSecrets } from '../../src/ops/log.js';
import { configWith, loadConfig } from '../../src/config/load.js';
import type { TileService } from '../../src/tiles/types.js';

const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * Parses the Prometheus text format strictly: every sample line must be `name{labels} value`. (prom-client writes
 * NaN as `Nan`, e.g. the event-loop lag before its first sample; Prometheus parses floats case-insensitively.)
 */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|[+-]Inf|NaN|Nan)$/.exec(
        line,
      );
    if (!m) throw new Error(`not exposition format: ${line}`);
    out.set(m[1]! + (m[2] ?? ''), Number(m[3]));
  }
  return out;
}

describe('metrics registry', () => {
  it('holds prom-client default process metrics beside the app metrics, one registry per app', async () => {
    const a = createMetricsRegistry();
    const b = createMetricsRegistry();
    // The same svcmaps metric in two apps' registries (tests build several apps in one process).
    for (const r of [a, b]) new RequestMetrics(r).record('/livez', 200, 0.0002, undefined);
    const text = await a.metrics();
    const s = parse(text);
    expect(s.get('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(s.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(s.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    expect(s.get('svcmaps_http_requests_total{route="/livez",status="200"}')).toBe(1);
    expect(parse(await b.metrics()).get('svcmaps_http_requests_total{route="/livez",status="200"}')).toBe(1);
  });

  it('renders hand-counted histograms cumulatively, with escaped label values', async () => {
    const reg = createMetricsRegistry();
    const h = new LatencyCounts();
    for (const v of [0.002, 0.02, 0.02, 3]) h.observe(v);
    new CountedHistogram(
      { name: 'tile_render_seconds', help: 'render time', labelNames: ['zoom', 'kind'], registers: [reg] },
      () => [[{ zoom: 12, kind: 'a"b' }, h]],
    );
    const s = parse(await reg.metrics());
    const l = 'zoom="12",kind="a\\"b"';
    expect(s.get(`tile_render_seconds_bucket{${l},le="0.0025"}`)).toBe(1);
    expect(s.get(`tile_render_seconds_bucket{${l},le="0.025"}`)).toBe(3);
    expect(s.get(`tile_render_seconds_bucket{${l},le="+Inf"}`)).toBe(4);
    expect(s.get(`tile_render_seconds_count{${l}}`)).toBe(4);
    expect(s.get(`tile_render_seconds_sum{${l}}`)).toBeCloseTo(3.042);
  });

  it('counts requests per route and status and the tier that answered', async () => {
    const reg = createMetricsRegistry();
    const r = new RequestMetrics(reg);
    r.record('/maps/v1/tiles/:z/:x/:y', 200, 0.004, 'memory');
    r.record('/maps/v1/tiles/:z/:x/:y', 200, 0.2, 'fresh');
    r.record(undefined, 404, 0.0001, undefined);
    const s = parse(await reg.metrics());
    expect(s.get('svcmaps_http_requests_total{route="/maps/v1/tiles/:z/:x/:y",status="200"}')).toBe(2);
    expect(s.get('svcmaps_http_requests_total{route="(unmatched)",status="404"}')).toBe(1);
    expect(s.get('svcmaps_answers_total{route="/maps/v1/tiles/:z/:x/:y",source="memory"}')).toBe(1);
    expect(s.get('svcmaps_http_request_duration_seconds_bucket{route="/maps/v1/tiles/:z/:x/:y",le="0.005"}')).toBe(1);
    expect(s.get('svcmaps_http_request_duration_seconds_count{route="(unmatched)"}')).toBe(1);
    expect(r.total).toBe(3);
  });
});

describe('/metrics endpoints', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    s = await startServer({ metrics: { port: 0, host: '127.0.0.1' } });
    admin = s.key({ role: 'super_admin' }).key;
    user = s.key().key;
  });
  afterAll(() => s?.close());

  const scrape = async () => {
    const r = await s.get('/admin/metrics', { 'X-API-Key': admin });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parse(await r.text());
  };

  it('serves /admin/metrics to super_admin keys only, and its counts follow the traffic', async () => {
    expect((await s.get('/admin/metrics', { 'X-API-Key': user })).status).toBe(403);
    expect((await s.get('/admin/metrics')).status).toBe(401);
    const before = await scrape();
    const series = 'svcmaps_http_requests_total{route="/maps/v1/autocomplete",status="200"}';
    for (let i = 0; i < 3; i++)
      expect((await s.get(`/maps/v1/autocomplete?q=x${i}`, { 'X-API-Key': user })).status).toBe(200);
    expect((await s.get('/maps/v1/autocomplete?q=x')).status).toBe(401);
    const after = await scrape();
    expect((after.get(series) ?? 0) - (before.get(series) ?? 0)).toBe(3);
    expect(after.get('svcmaps_http_requests_total{route="/maps/v1/autocomplete",status="401"}')).toBeGreaterThanOrEqual(
      1,
    );
    expect(after.get('svcmaps_answers_total{route="/maps/v1/autocomplete",source="miss"}')).toBeGreaterThanOrEqual(3);
    expect(
      after.get('svcmaps_http_request_duration_seconds_count{route="/maps/v1/autocomplete"}'),
    ).toBeGreaterThanOrEqual(4);
    expect(after.get('svcmaps_pool_saturated{pool="autocomplete"}')).toBe(0);
    expect(after.get('svcmaps_http_requests_in_flight')).toBe(1); // the scrape itself
  });

  it('keeps every metric name, type and help text dashboards use, beside the process metrics', async () => {
    const r = await s.get('/admin/metrics', { 'X-API-Key': admin });
    const text = await r.text();
    const help = new Map([...text.matchAll(/^# HELP (svcmaps_\w+) (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    const families = [...text.matchAll(/^# TYPE (svcmaps_\w+) (\w+)$/gm)].map((m) => [
      m[1]!,
      `${m[2]}: ${help.get(m[1]!)}`,
    ]);
    expect(Object.fromEntries(families)).toEqual({
      svcmaps_pool_active: 'gauge: Jobs running in a capability pool',
      svcmaps_pool_background_failures_total:
        'counter: Background jobs of a capability pool (directions prefetch) that ended in an error',
      svcmaps_redis_command_failures_total:
        'counter: Failed Redis commands of this process (cluster mode), by kind: command (a script or command error, e.g. ERR, NOSCRIPT, WRONGTYPE: a bug) or connection (Redis out of reach or not serving); limits fail open on both',
      svcmaps_pool_queued: 'gauge: Jobs waiting in a capability pool',
      svcmaps_pool_saturated: 'gauge: 1 when a pool sheds new work (all slots busy and its queue full)',
      svcmaps_hot_tier_bytes: 'gauge: Bytes held by the in-process hot tier',
      svcmaps_hot_tier_max_bytes: 'gauge: Configured bound of the hot tier (cache.memory_bytes)',
      svcmaps_tile_origin_seconds:
        'histogram: Time the tile origin took to produce one tile (render time for the built-in renderer), by zoom',
      svcmaps_tile_origin_failures_total: 'counter: Tile origin calls that failed or timed out, by zoom',
      svcmaps_http_requests_total: 'counter: HTTP requests answered, by route pattern and status',
      svcmaps_http_request_duration_seconds: 'histogram: Time from routing to reply, by route pattern',
      svcmaps_answers_total:
        'counter: Answers by the tier that served them (tiles: memory, cache, fresh, ancestor-*; JSON: hit or miss)',
      svcmaps_http_requests_in_flight: 'gauge: Requests being handled now',
      svcmaps_engine_threads: 'gauge: Threads of an engine pool (routing, places, render)',
      svcmaps_engine_tasks_active: 'gauge: Engine tasks on a thread now',
      svcmaps_engine_tasks_queued: 'gauge: Engine tasks waiting for a thread',
      svcmaps_engine_tasks_completed_total: 'counter: Engine tasks a thread answered',
      svcmaps_engine_tasks_helped_total:
        "counter: Parts of engine tasks written by another thread than the task's (routing: paths of a route answer)",
      svcmaps_engine_tasks_inline_total:
        'counter: Engine tasks run on the calling thread instead (routing: short routes while the HTTP thread is free), by outcome: answered there, or handed on to a pool thread after running over budget',
      svcmaps_engine_tasks_shed_total:
        'counter: Engine tasks refused at once because the pool queue was full (*_BACKPRESSURE)',
      svcmaps_engine_tasks_abandoned_total:
        'counter: Engine tasks dropped or abandoned, by reason: deadline passed, or requester gone (aborted)',
      svcmaps_engine_threads_replaced_total:
        'counter: Engine threads terminated and replaced (stuck past a cancel, or crashed)',
      svcmaps_admission_slots: 'gauge: Jobs a render admission control runs at once',
      svcmaps_admission_in_flight: 'gauge: Jobs running under a render admission control',
      svcmaps_admission_job_seconds:
        'gauge: Recent job time: moving average over completions, at least the youngest running job while every slot is busy',
      svcmaps_admission_queued: 'gauge: Jobs waiting for a render slot, by lane',
      svcmaps_admission_predicted_wait_seconds:
        'gauge: Predicted wait of a job entering the lane now (0 until a few jobs per slot were measured)',
      svcmaps_admission_started_total: 'counter: Jobs started, by lane',
      svcmaps_admission_shed_total:
        'counter: Jobs not run, by lane and reason: refused at once (full queue, late: predicted to miss their wait budget) or dropped while queued (expired, gone)',
    });
    const samples = parse(text);
    expect(samples.get('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(samples.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });

  it('also serves /metrics without credentials on the admin port when metrics.port is set', async () => {
    expect(s.app.metricsServer).toBeUndefined(); // metrics.port 0 = off
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const withPort = await startServer({ metrics: { port, host: '127.0.0.1' } });
    try {
      const url = withPort.app.metricsServer!.url;
      expect(url).toBe(`http://127.0.0.1:${port}/metrics`);
      await withPort.get('/livez');
      const r = await fetch(url);
      expect(r.status).toBe(200);
      const text = parse(await r.text());
      expect(text.get('svcmaps_http_requests_total{route="/livez",status="200"}')).toBe(1);
      expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await withPort.close();
    }
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

describe('engine pools and admission control in /admin/metrics', () => {
  it('exports places and render threads and both render admissions, and the series move with the traffic', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-engine-metrics-'));
    // The real places index (places threads) and the default renderer (render threads); one static map at a time.
    // Tiles and maps take as long as they need: on a busy machine the render threads' start-up alone can outlast
    // the default tile timeout and static-map wait.
    const s = await startPlacesServer(dir, {
      admission: { staticmap: { concurrency: 1, queue: 1, wait_ms: 120_000 } },
      tiles: { timeout_ms: 120_000 },
      http: { request_timeout_ms: 120_000 },
    });
    try {
      const admin = s.key({ role: 'super_admin' }).key;
      const H = { 'X-API-Key': s.key({ perMinute: 100_000 }).key };
      const scrape = async () => parse(await (await s.get('/admin/metrics', { 'X-API-Key': admin })).text());
      const before = await scrape();
      const n = (m: Map<string, number>, series: string) => m.get(series) ?? 0;
      expect(before.get('svcmaps_engine_threads{engine="render"}')).toBe(2);
      expect(before.get('svcmaps_engine_threads{engine="places"}')).toBeGreaterThanOrEqual(1);
      expect(before.has('svcmaps_engine_threads{engine="routing"}')).toBe(false); // no road graph: no threads
      expect(before.get('svcmaps_admission_slots{admission="tiles"}')).toBe(4);
      expect(before.get('svcmaps_admission_slots{admission="staticmap"}')).toBe(1);
      expect(before.get('svcmaps_admission_queued{admission="tiles",lane="interactive"}')).toBe(0);
      expect(before.get('svcmaps_admission_predicted_wait_seconds{admission="tiles",lane="batch"}')).toBe(0);
      expect(n(before, 'svcmaps_admission_shed_total{admission="staticmap",lane="batch",reason="full"}')).toBe(0);

      // A cold tile: one interactive admission, one render on a render thread.
      expect((await s.get('/maps/v1/tiles/5/17/11.png', H)).status).toBe(200);
      // Searches until a places thread has opened the index and answered one (until then they run in-process).
      const placesDone = 'svcmaps_engine_tasks_completed_total{engine="places"}';
      for (let i = 0; i < 600 && n(await scrape(), placesDone) === n(before, placesDone); i++) {
        expect(
          (await s.get(`/maps/v1/autocomplete?q=amm${'a'.repeat(i % 5)}&lat=${30 + i / 100}&lng=35`, H)).status,
        ).toBe(200);
        await new Promise((r) => setTimeout(r, 50));
      }
      // A burst of small static maps: one draws, one waits, the rest are refused at once (full queue).
      const maps = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          s.get(`/maps/v1/staticmap?path=${10 + i},10,${10 + i}.01,10.01&w=64&h=64`, H),
        ),
      );
      const refused = maps.filter((r) => r.status === 503).length;
      expect(refused).toBeGreaterThanOrEqual(1);

      const after = await scrape();
      const moved = (series: string) => n(after, series) - n(before, series);
      expect(moved('svcmaps_admission_started_total{admission="tiles",lane="interactive"}')).toBe(1);
      expect(moved('svcmaps_admission_started_total{admission="tiles",lane="batch"}')).toBeGreaterThanOrEqual(1);
      expect(moved('svcmaps_admission_started_total{admission="staticmap",lane="batch"}')).toBe(6 - refused);
      expect(moved('svcmaps_admission_shed_total{admission="staticmap",lane="batch",reason="full"}')).toBe(refused);
      expect(moved('svcmaps_engine_tasks_completed_total{engine="render"}')).toBeGreaterThanOrEqual(2);
      expect(moved(placesDone)).toBeGreaterThanOrEqual(1);
      expect(after.get('svcmaps_admission_job_seconds{admission="tiles"}')).toBeGreaterThan(0);
      expect(after.get('svcmaps_admission_in_flight{admission="staticmap"}')).toBe(0);
      expect(after.get('svcmaps_engine_tasks_abandoned_total{engine="places",reason="aborted"}')).toBe(0);
      expect(after.get('svcmaps_engine_threads_replaced_total{engine="render"}')).toBe(0);
      expect(after.get('svcmaps_engine_tasks_shed_total{engine="places"}')).toBe(0);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('structured request logs', () => {
  it('one JSON line per request with request id, key id, route, status, duration and the answering tier', async () => {
    const lines: string[] = [];
    const s = await startServer({}, { log: jsonLogger('info', (l) => lines.push(l)) });
    try {
      const k = s.key();
      const rid = '0b7c3f0e-8a51-4f4e-9d6a-1d2c3b4a5f60';
      await s.get('/maps/v1/autocomplete?q=petra', { 'X-API-Key': k.key, 'X-Request-ID': rid });
      await s.get('/maps/v1/tiles/0/0/0.png', { 'X-API-Key': k.key });
      await s.get('/maps/v1/tiles/0/0/0.png', { 'X-API-Key': k.key });
      const reqs = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      expect(reqs[0]).toMatchObject({
        level: 'info',
        request_id: rid,
        key_id: k.id,
        method: 'GET',
        route: '/maps/v1/autocomplete',
        status: 200,
        source: 'miss',
      });
      expect(reqs[0].duration_ms).toBeGreaterThanOrEqual(0);
      // The field names operators parse: an ISO timestamp, the level by name, the message; nothing else added.
      expect(reqs[0].ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Object.keys(reqs[0]).sort()).toEqual(
        ['duration_ms', 'key_id', 'level', 'method', 'msg', 'request_id', 'route', 'source', 'status', 'ts'].sort(),
      );
      expect(reqs.slice(1).map((r) => [r.route, r.status, r.source])).toEqual([
        ['/maps/v1/tiles/:z/:x/:y', 200, 'fresh'],
        ['/maps/v1/tiles/:z/:x/:y', 200, 'memory'],
      ]);
    } finally {
      await s.close();
    }
  });

  it('log.requests false: no access line for answered requests, but 5xx answers and errors are still logged', async () => {
    expect(configWith({}).log.requests).toBe(true);
    expect(() => configWith({ log: { requests: 'no' } })).toThrow(/log.requests/);
    expect(loadConfig({ env: { SVCMAPS_LOG__REQUESTS: 'false' } }).log.requests).toBe(false);
    const lines: string[] = [];
    const failing: TileService = {
      tile: async (r) => {
        if (r.z === 1) throw new Error('tile store exploded');
        return { bytes: PNG_1x1, source: 'memory' };
      },
    };
    const s = await startServer(
      { log: { requests: false } },
      { log: jsonLogger('info', (l) => lines.push(l)), tiles: failing },
    );
    try {
      const k = s.key();
      expect((await s.get('/livez')).status).toBe(200);
      expect((await s.get('/maps/v1/autocomplete?q=petra', { 'X-API-Key': k.key })).status).toBe(200);
      expect((await s.get('/maps/v1/tiles/0/0/0.png', { 'X-API-Key': k.key })).status).toBe(200);
      expect((await s.get('/maps/v1/autocomplete?q=petra')).status).toBe(401);
      expect((await s.get('/maps/v1/tiles/1/0/0.png', { 'X-API-Key': k.key })).status).toBe(500);
      const logged = lines.map((l) => JSON.parse(l));
      expect(logged.filter((l) => l.msg === 'request').map((l) => [l.route, l.status])).toEqual([
        ['/maps/v1/tiles/:z/:x/:y', 500],
      ]);
      expect(logged.find((l) => l.msg === 'unhandled error')).toMatchObject({ level: 'error' });
      // The metrics still count every request: only the log line is dropped.
      expect(s.app.requests.total).toBe(5);
    } finally {
      await s.close();
    }
  });

  it('never writes an API key, a tile token or a bearer token', async () => {
    const lines: string[] = [];
    const s = await startServer({}, { log: jsonLogger('info', (l) => lines.push(l)) });
    try {
      const k = s.key();
      const minted = await s.post('/maps/v1/tile-token', undefined, { 'X-API-Key': k.key });
      const token = ((await minted.json()) as { data: { token: string } }).data.token;
      expect((await s.get(`/maps/v1/sprites/svc.json?t=${token}`)).status).toBe(200);
      expect((await s.get(`/maps/v1/sprites/svc.json?t=${token}x`)).status).toBe(401);
      expect((await s.get('/maps/v1/autocomplete?q=a&key=in-the-query', { 'X-API-Key': k.key })).status).toBe(200);
      expect((await s.get('/maps/v1/autocomplete?q=a', { Authorization: 'Bearer not.a.jwt' })).status).not.toBe(200);
      const all = lines.join('');
      expect(lines.filter((l) => JSON.parse(l).msg === 'request')).toHaveLength(5);
      for (const secret of [k.key, token, 'in-the-query', 'not.a.jwt']) expect(all).not.toContain(secret);
    } finally {
      await s.close();
    }
  });

  it('redacts credential fields and masks credential query parameters in warnings and errors', () => {
    const lines: string[] = [];
    const log = jsonLogger('debug', (l) => lines.push(l));
    log.info('fields', {
      key: 'k1',
      token: 't1',
      authorization: 'Bearer b1',
      headers: { 'x-api-key': 'k2', authorization: 'Bearer b2', accept: 'image/png' },
      query: { t: 't2', q: 'petra' },
      route: '/maps/v1/tiles/:z/:x/:y',
    });
    log.warn('tile origin unavailable', {
      error: 'https://tiles.example/3/4/2.png?key=k3&style=dark: gave up',
      tile: '3/4/2@1',
    });
    log.error('upstream failed: https://route.example/v1?access_token=k4', { status: 502 });
    const [info, warn, error] = lines.map((l) => JSON.parse(l));
    expect(info).toMatchObject({
      level: 'info',
      key: '[redacted]',
      token: '[redacted]',
      authorization: '[redacted]',
      headers: { 'x-api-key': '[redacted]', authorization: '[redacted]', accept: 'image/png' },
      query: { t: '[redacted]', q: 'petra' },
      route: '/maps/v1/tiles/:z/:x/:y',
    });
    expect(warn).toMatchObject({
      level: 'warn',
      error: 'https://tiles.example/3/4/2.png?key=[redacted]&style=dark: gave up',
      tile: '3/4/2@1',
    });
    expect(error).toMatchObject({
      level: 'error',
      msg: 'upstream failed: https://route.example/v1?access_token=[redacted]',
    });
    expect(lines.join('')).not.toMatch(/k[1-4]|[tb][12]/);
    expect(maskSecrets('/x?a=1&t=abc.def&b=2')).toBe('/x?a=1&t=[redacted]&b=2');
  });

  /** Runs `body` after a production logger is made (`log`), in a process of its own; its exit code and stderr lines. */
  const logIn = (body: string[]) => {
    const code = [
      `import { jsonLogger } from ${JSON.stringify(join(__dirname, '../../src/ops/log.ts'))};`,
      'const log = jsonLogger();',
      ...body,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    const lines = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { i?: number; level: string; msg: string });
    return { status: r.status, lines, tail: r.stderr.slice(-500) };
  };

  it('writes to stderr asynchronously and loses no line when the process exits right after flush()', () => {
    const r = logIn([
      "for (let i = 0; i < 20000; i++) log.info('line', { i });",
      "log.info('stopped');",
      'await log.flush();',
      'process.exit(0);',
    ]);
    expect(r.status, r.tail).toBe(0);
    expect(r.lines).toHaveLength(20001);
    expect(r.lines.slice(0, -1).every((l, i) => l.i === i)).toBe(true);
    expect(r.lines.at(-1)).toMatchObject({ level: 'info', msg: 'stopped' });
  });

  it('loses no line when the process exits in the turn that logged it, without flush()', () => {
    const r = logIn([
      "setTimeout(() => { for (let i = 0; i < 5000; i++) log.info('line', { i }); log.error('last'); process.exit(3); }, 10);",
    ]);
    expect(r.status, r.tail).toBe(3);
    expect(r.lines).toHaveLength(5001);
    expect(r.lines.slice(0, -1).every((l, i) => l.i === i)).toBe(true);
    expect(r.lines.at(-1)).toMatchObject({ level: 'error', msg: 'last' });
  });
});
