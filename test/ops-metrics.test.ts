import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../src/ops/metrics.js';
import { RequestMetrics } from '../src/ops/request-metrics.js';
import { createServer, type AddressInfo } from 'node:net';
import { startServer, type TestServer } from './helpers/app.js';
import { jsonLogger } from '../src/core/log.js';

/** Parses the Prometheus text format strictly: every sample line must be `name{labels} value`. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    const m =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(
        line,
      );
    if (!m) throw new Error(`not exposition format: ${line}`);
    out.set(m[1]! + (m[2] ?? ''), Number(m[3]));
  }
  return out;
}

describe('metrics registry', () => {
  it('renders counters, gauges and cumulative histograms in the exposition format', () => {
    const m = new MetricsRegistry();
    m.inc('jobs_total', { kind: 'a"b' });
    m.inc('jobs_total', { kind: 'a"b' }, 2);
    m.gauge('queue_depth', 'waiting jobs', () => [[{ q: 'x' }, 7]]);
    for (const v of [0.002, 0.02, 0.02, 3]) m.observe('tile_render_seconds', { zoom: 12 }, v);
    const s = parse(m.render());
    expect(s.get('jobs_total{kind="a\\"b"}')).toBe(3);
    expect(s.get('queue_depth{q="x"}')).toBe(7);
    expect(s.get('tile_render_seconds_bucket{zoom="12",le="0.0025"}')).toBe(1);
    expect(s.get('tile_render_seconds_bucket{zoom="12",le="0.025"}')).toBe(3);
    expect(s.get('tile_render_seconds_bucket{zoom="12",le="+Inf"}')).toBe(4);
    expect(s.get('tile_render_seconds_count{zoom="12"}')).toBe(4);
    expect(s.get('tile_render_seconds_sum{zoom="12"}')).toBeCloseTo(3.042);
    expect(() => m.observe('jobs_total', {}, 1)).toThrow(/counter/);
  });

  it('counts requests per route and status and the tier that answered', () => {
    const reg = new MetricsRegistry();
    const r = new RequestMetrics(reg);
    r.record('/maps/v1/tiles/:z/:x/:y', 200, 0.004, 'memory');
    r.record('/maps/v1/tiles/:z/:x/:y', 200, 0.2, 'fresh');
    r.record(undefined, 404, 0.0001, undefined);
    const s = parse(reg.render());
    expect(s.get('svcmaps_http_requests_total{route="/maps/v1/tiles/:z/:x/:y",status="200"}')).toBe(2);
    expect(s.get('svcmaps_http_requests_total{route="(unmatched)",status="404"}')).toBe(1);
    expect(s.get('svcmaps_answers_total{route="/maps/v1/tiles/:z/:x/:y",source="memory"}')).toBe(1);
    expect(s.get('svcmaps_http_request_duration_seconds_bucket{route="/maps/v1/tiles/:z/:x/:y",le="0.005"}')).toBe(1);
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
      expect(reqs.slice(1).map((r) => [r.route, r.status, r.source])).toEqual([
        ['/maps/v1/tiles/:z/:x/:y', 200, 'fresh'],
        ['/maps/v1/tiles/:z/:x/:y', 200, 'memory'],
      ]);
    } finally {
      await s.close();
    }
  });
});
