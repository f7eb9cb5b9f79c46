import { describe, expect, it } from 'vitest';
import { Pool } from '../../src/limits/pool.js';
import { DirectionsService, type RouteCache } from '../../src/routing/directions.js';
import { decodeLeg, enginePath } from '../../src/routing/answer/route-record.js';
import type { DirectionsRequest, RoutingEngine } from '../../src/routing/types.js';

// A fresh route goes into the route cache once its answer is on its way (a setImmediate after the answer): the
// answer never waits for the encoding or the cache, a retry right after it is a hit, and a cache that fails to keep
// it costs that one entry and a warning, never the answer or the process.

const FROM = { lat: 31.95, lng: 35.91 },
  TO = { lat: 31.96, lng: 35.93 };
const request: DirectionsRequest = {
  origin: FROM,
  dest: TO,
  waypoints: [],
  coarseOrigin: false,
  locale: 'en',
  overview: 'simplified',
};

/** An engine answering one straight path, counting its queries. */
function engine(): RoutingEngine & { queries: number } {
  const e = {
    name: 'test',
    local: true,
    queries: 0,
    async route() {
      e.queries++;
      const path = enginePath({
        label: 'Fastest',
        line: '[[35.91,31.95],[35.93,31.96]]',
        distance_m: 2200,
        duration_s: 180,
      });
      return { kind: 'ok' as const, paths: [path] };
    },
  };
  return e;
}

function service(cache: RouteCache, warnings: string[] = []) {
  const e = engine();
  const log = { debug() {}, info() {}, error() {}, warn: (msg: string) => void warnings.push(msg) };
  const d = new DirectionsService({
    engine: e,
    cache,
    pool: new Pool('directions', 4, 4, 'DIRECTIONS_BACKPRESSURE'),
    prefetchPool: new Pool('prefetch', 1, 1, 'DIRECTIONS_BACKPRESSURE'),
    prefetchTimeoutMs: 1000,
    log,
  });
  return { d, e };
}

describe('route cache writes', () => {
  it('keeps a fresh leg after the answer, and a retry is a hit', async () => {
    const kept = new Map<string, Buffer>();
    const cache: RouteCache = {
      getBytes: (k) => (kept.has(k) ? { value: kept.get(k)!, tier: 'memory' } : undefined),
      setBytes: (k, v) => void kept.set(k, v),
    };
    const { d, e } = service(cache);
    const first = await d.directions(request);
    expect(first).toMatchObject({ source: 'fresh', distance_meters: 2200 });
    expect(kept.size).toBe(0); // not yet: after the answer
    await new Promise((r) => setImmediate(r));
    expect(kept.size).toBe(1);
    expect(decodeLeg([...kept.values()][0]!)?.paths[0]?.distance_m).toBe(2200);
    expect(await d.directions(request)).toMatchObject({ source: 'memory', distance_meters: 2200 });
    expect(e.queries).toBe(1);
  });

  it('a cache that fails to keep a leg costs a warning, not the answer', async () => {
    const warnings: string[] = [];
    const cache: RouteCache = {
      getBytes: () => undefined,
      setBytes: () => {
        throw new Error('database is closed');
      },
    };
    const { d, e } = service(cache, warnings);
    expect(await d.directions(request)).toMatchObject({ source: 'fresh', distance_meters: 2200 });
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual(['route not cached']);
    expect(await d.directions(request)).toMatchObject({ source: 'fresh' });
    expect(e.queries).toBe(2);
  });
});
