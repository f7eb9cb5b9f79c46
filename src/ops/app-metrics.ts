import { Counter, Gauge, Histogram } from 'prom-client';
import type { Pool } from '../limits/pool.js';
import { redisFaultCounts } from '../store/redis/client.js';
import type { TileOrigin } from '../tiles/origins/types.js';
import { LATENCY_BUCKETS, type MetricsRegistry } from './metrics.js';

/** Series read at scrape time: pool occupancy, saturation and failed background jobs, hot tier size. */
export function registerServiceGauges(
  registry: MetricsRegistry,
  pools: Pool[],
  hotBytes: () => number,
  hotMax: number,
): void {
  const registers = [registry];
  const perPool = (name: string, help: string, value: (p: Pool) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers,
      collect() {
        for (const p of pools) this.set({ pool: p.name }, value(p));
      },
    });
  perPool('svcmaps_pool_active', 'Jobs running in a capability pool', (p) => p.active);
  perPool('svcmaps_pool_queued', 'Jobs waiting in a capability pool', (p) => p.queued);
  perPool('svcmaps_pool_saturated', '1 when a pool sheds new work (all slots busy and its queue full)', (p) =>
    p.saturated ? 1 : 0,
  );
  new Counter({
    name: 'svcmaps_pool_background_failures_total',
    help: 'Background jobs of a capability pool (directions prefetch) that ended in an error',
    labelNames: ['pool'],
    registers,
    collect() {
      this.reset();
      for (const p of pools) this.inc({ pool: p.name }, p.failed);
    },
  });
  new Counter({
    name: 'svcmaps_redis_command_failures_total',
    help:
      'Failed Redis commands of this process (cluster mode), by kind: command (a script or command error, e.g. ERR, ' +
      'NOSCRIPT, WRONGTYPE: a bug) or connection (Redis out of reach or not serving); limits fail open on both',
    labelNames: ['kind'],
    registers,
    collect() {
      this.reset();
      for (const [kind, n] of Object.entries(redisFaultCounts)) this.inc({ kind }, n);
    },
  });
  new Gauge({
    name: 'svcmaps_hot_tier_bytes',
    help: 'Bytes held by the in-process hot tier',
    registers,
    collect() {
      this.set(hotBytes());
    },
  });
  new Gauge({
    name: 'svcmaps_hot_tier_max_bytes',
    help: 'Configured bound of the hot tier (cache.memory_bytes)',
    registers,
    collect() {
      this.set(hotMax);
    },
  });
}

/**
 * Times the tile origin (render, upstream XYZ or MBTiles) per zoom, without the tiles code knowing about metrics:
 * the composition root wraps whatever origin config names. An origin call is a render or an upstream fetch, far off
 * the hot path, so it records into prom-client directly.
 */
export function timedOrigin(origin: TileOrigin | undefined, registry: MetricsRegistry): TileOrigin | undefined {
  if (!origin) return undefined;
  const seconds = new Histogram({
    name: 'svcmaps_tile_origin_seconds',
    help: 'Time the tile origin took to produce one tile (render time for the built-in renderer), by zoom',
    labelNames: ['origin', 'zoom'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'svcmaps_tile_origin_failures_total',
    help: 'Tile origin calls that failed or timed out, by zoom',
    labelNames: ['origin', 'zoom'],
    registers: [registry],
  });
  return {
    name: origin.name,
    async fetch(z, x, y, scale, signal) {
      const t0 = performance.now();
      try {
        const bytes = await origin.fetch(z, x, y, scale, signal);
        seconds.observe({ origin: origin.name, zoom: z }, (performance.now() - t0) / 1000);
        return bytes;
      } catch (e) {
        // A render dropped because every requester went away is not an origin failure (a deadline is).
        if (!signal.aborted || (signal.reason as Error | undefined)?.name === 'TimeoutError')
          failures.inc({ origin: origin.name, zoom: z });
        throw e;
      }
    },
    close: () => origin.close?.(),
  };
}
