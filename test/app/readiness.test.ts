import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { GRAPH_FILE } from '../../src/routing/graph.js';
import { startPlacesServer, startServer, type TestServer } from '../helpers/app.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

// The server listens before the road graph is loaded; /readyz says when the background load is done.
let graphDir: string;
const dirs: string[] = [];
const servers: TestServer[] = [];

beforeAll(async () => {
  graphDir = mkdtempSync(join(tmpdir(), 'svcmaps-readyz-graph-'));
  await roadsImporter.run(MONACO_PBF, graphDir, () => undefined, new AbortController().signal);
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  for (const d of [graphDir, ...dirs]) rmSync(d, { recursive: true, force: true });
});

/** A fresh data directory, with a copy of the Monaco graph or with `graph` bytes as roads.graph. */
function dataDir(graph?: string): string {
  const d = mkdtempSync(join(tmpdir(), 'svcmaps-readyz-'));
  dirs.push(d);
  if (graph === undefined) copyFileSync(join(graphDir, GRAPH_FILE), join(d, GRAPH_FILE));
  else if (graph) writeFileSync(join(d, GRAPH_FILE), graph);
  return d;
}

/** A gate the test opens: the road graph's background load (start-up and reload) waits on the current one. */
function gate() {
  let open!: () => void;
  let held = new Promise<void>((r) => (open = r));
  return {
    wait: () => held,
    open: () => open(),
    close: () => {
      held = new Promise<void>((r) => (open = r));
    },
  };
}

const body = { origin_lat: 43.7384, origin_lng: 7.4246, dest_lat: 43.745, dest_lng: 7.433 };
let nth = 0;
/** Distinct destinations, so no answer is a cache hit of an earlier one. */
const route = (s: TestServer, H: Record<string, string>) =>
  s.post('/maps/v1/directions', { ...body, dest_lat: body.dest_lat + nth++ * 0.0001 }, H);

async function readyz(s: TestServer) {
  const r = await s.get('/readyz');
  return { status: r.status, cache: r.headers.get('cache-control'), body: (await r.json()) as Record<string, unknown> };
}

async function until(f: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('start-up: the road graph loads in the background', () => {
  it('/readyz is 503 while the graph load is held; a route waits for the engine within its budget, then 200 and real routes', async () => {
    const g = gate();
    // routing.timeout_ms bounds the wait of a route without a budget: long, so a busy machine's load fits in it
    const s = await startServer(
      { data_dir: dataDir(), routing: { timeout_ms: 120_000 } },
      { routingHooks: { beforeLoad: g.wait } },
    );
    servers.push(s);
    const H = { 'X-API-Key': s.key().key };

    expect((await s.get('/livez')).status).toBe(200);
    // no credentials needed, never cached, flat JSON naming what is still loading
    expect(await readyz(s)).toEqual({
      status: 503,
      cache: 'no-store',
      body: { status: 'starting', routing: 'loading', places: 'ready' },
    });
    // a route with a budget of its own gets the degraded line once that budget ran out, not before
    const budgeted = await s.post('/maps/v1/directions', { ...body, max_wait_ms: 300 }, H);
    expect(budgeted.status).toBe(200);
    const degraded = (await budgeted.json()).data;
    expect(degraded).toMatchObject({ partial: true, reason: 'degraded', source: 'server_straight', routes: [] });
    expect(degraded.elapsed_ms).toBeGreaterThanOrEqual(250); // its budget (timers may round a little early)
    // one without a budget (and a waypoint route) waits for the engine: asked now, answered by it once it is in
    const waiting = route(s, H);
    const multi = s.post('/maps/v1/directions', { ...body, waypoints: [{ lat: 43.74, lng: 7.428 }] }, H);
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    // a reload asked for during the start-up load waits for it
    const reload = s.app.reload();

    g.open();
    const first = await waiting;
    expect(first.status).toBe(200);
    expect((await first.json()).data).toMatchObject({ source: 'fresh', engine: 'svc' });
    expect((await (await multi).json()).data).toMatchObject({ source: 'svc_multileg', partial: false });
    await until(async () => (await readyz(s)).status === 200);
    expect(await readyz(s)).toEqual({
      status: 200,
      cache: 'no-store',
      body: { status: 'ready', routing: 'ready', places: 'ready' },
    });
    const real = await route(s, H);
    expect(real.status).toBe(200);
    expect((await real.json()).data).toMatchObject({ source: 'fresh', engine: 'svc' });
    expect((await reload).find((r) => r.name === 'roads')).toMatchObject({ ok: true });
  });

  it('a reload keeps serving the current graph until the new one is loaded, and /readyz stays 200', async () => {
    const g = gate();
    g.open();
    const s = await startServer({ data_dir: dataDir() }, { routingHooks: { beforeLoad: g.wait } });
    servers.push(s);
    const H = { 'X-API-Key': s.key().key };
    await s.app.loaded;
    g.close();
    const reload = s.app.reload();
    await new Promise((r) => setTimeout(r, 50));
    expect((await readyz(s)).status).toBe(200);
    expect((await (await route(s, H)).json()).data).toMatchObject({ source: 'fresh', engine: 'svc' });
    g.open();
    expect((await reload).find((r) => r.name === 'roads')).toMatchObject({ ok: true });
    expect((await (await route(s, H)).json()).data).toMatchObject({ source: 'fresh', engine: 'svc' });
  });

  it('no graph imported, or an unreadable one: /readyz is 200 and names it; directions answer the degraded line', async () => {
    for (const [graph, routing] of [
      ['', 'no_graph'],
      ['not a road graph', 'unavailable'],
    ] as const) {
      const logged: Array<[string, string]> = [];
      const at = (level: string) => (msg: string) => void logged.push([level, msg]);
      const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
      const s = await startServer({ data_dir: dataDir(graph) }, { log });
      servers.push(s);
      expect(await readyz(s)).toEqual({
        status: 200,
        cache: 'no-store',
        body: { status: 'ready', routing, places: 'ready' },
      });
      const before = logged.length;
      for (let i = 0; i < 3; i++) {
        const r = await route(s, { 'X-API-Key': s.key().key });
        expect(r.status).toBe(200);
        expect((await r.json()).data).toMatchObject({ partial: true, source: 'server_straight' });
      }
      // /readyz and the start-up log say why; each degraded route is not a warning of its own
      const perRequest = logged.slice(before).filter(([, msg]) => msg.startsWith('routing failed'));
      expect(perRequest.map(([level]) => level)).toEqual(['debug', 'debug', 'debug']);
    }
  });

  it('/readyz ignores credentials like /livez and /healthz', async () => {
    const s = await startServer({ data_dir: dataDir('') });
    servers.push(s);
    for (const headers of [{}, { 'X-API-Key': 'cmk_live_not_a_key' }, { Authorization: 'Bearer nonsense' }]) {
      const r = await s.get('/readyz', headers);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
    }
  });
});

describe('start-up: the places threads', () => {
  it('app.loaded settles once they are up: /readyz is ready and the first search answers, never an empty budget', async () => {
    // the test helper awaits app.loaded, as `svcmaps selftest` does before its checks
    const s = await startPlacesServer(dataDir(''));
    servers.push(s);
    expect(await readyz(s)).toMatchObject({ status: 200, body: { routing: 'no_graph', places: 'ready' } });
    const r = await s.get('/maps/v1/autocomplete?q=Amman', { 'X-API-Key': s.key().key });
    const { data } = (await r.json()) as { data: { predictions: Array<{ name: string }>; source: string } };
    expect(data.source).toBe('fresh');
    expect(data.predictions[0]?.name).toBe('Amman');
  });
});
