import type { Config } from '../config/defaults.js';
import type { HotTier } from '../cache/hot-tier.js';
import type { MetricsRegistry } from '../ops/metrics.js';
import { registerServiceGauges } from '../ops/app-metrics.js';
import { poolStatsOf, registerEngineMetrics } from '../ops/engine-metrics.js';
import type { Places } from './places.js';
import type { Routing } from './routing.js';
import type { Tiles } from './tiles.js';

/** The series /metrics reads at each scrape: request pools, the hot tier, engine threads and render admission. */
export function registerGauges(
  metrics: MetricsRegistry,
  config: Config,
  hot: HotTier,
  places: Places,
  routing: Routing,
  tiles: Tiles,
): void {
  registerServiceGauges(
    metrics,
    [...Object.values(places.pools), ...routing.pools],
    () => hot.bytes,
    config.cache.memory_bytes,
  );
  // Read at each scrape from whoever owns the pools then: reload swaps the routing engine and the places threads.
  registerEngineMetrics(
    metrics,
    () => ({
      routing: poolStatsOf(routing.directions.engine),
      places: places.threads?.stats,
      render: poolStatsOf(tiles.origin),
    }),
    tiles.admissions,
  );
}
