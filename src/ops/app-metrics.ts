import type { Pool } from '../limits/pool.js';
import type { TileOrigin } from '../tiles/origins/types.js';
import type { MetricsRegistry } from './metrics.js';

/** Gauges read at scrape time: pool occupancy and saturation, hot tier size. */
export function registerServiceGauges(m: MetricsRegistry, pools: Pool[], hotBytes: () => number, hotMax: number): void {
  m.gauge('svcmaps_pool_active', 'Jobs running in a capability pool', () =>
    pools.map((p) => [{ pool: p.name }, p.active]),
  );
  m.gauge('svcmaps_pool_queued', 'Jobs waiting in a capability pool', () =>
    pools.map((p) => [{ pool: p.name }, p.queued]),
  );
  m.gauge('svcmaps_pool_saturated', '1 when a pool sheds new work (all slots busy and its queue full)', () =>
    pools.map((p) => [{ pool: p.name }, p.saturated ? 1 : 0]),
  );
  m.gauge('svcmaps_hot_tier_bytes', 'Bytes held by the in-process hot tier', hotBytes);
  m.gauge('svcmaps_hot_tier_max_bytes', 'Configured bound of the hot tier (cache.memory_bytes)', () => hotMax);
}

/**
 * Times the tile origin (render, upstream XYZ or MBTiles) per zoom, without the tiles code knowing about metrics:
 * the composition root wraps whatever origin config names.
 */
export function timedOrigin(origin: TileOrigin | undefined, m: MetricsRegistry): TileOrigin | undefined {
  if (!origin) return undefined;
  m.describe(
    'svcmaps_tile_origin_seconds',
    'histogram',
    'Time the tile origin took to produce one tile (render time for the built-in renderer), by zoom',
  );
  m.describe('svcmaps_tile_origin_failures_total', 'counter', 'Tile origin calls that failed or timed out, by zoom');
  return {
    name: origin.name,
    async fetch(z, x, y, scale, signal) {
      const t0 = performance.now();
      try {
        const bytes = await origin.fetch(z, x, y, scale, signal);
        m.observe('svcmaps_tile_origin_seconds', { origin: origin.name, zoom: z }, (performance.now() - t0) / 1000);
        return bytes;
      } catch (e) {
        m.inc('svcmaps_tile_origin_failures_total', { origin: origin.name, zoom: z });
        throw e;
      }
    },
    close: () => origin.close?.(),
  };
}
