import type { Config } from '../config/defaults.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import { KeyAdmin, SharedKeyAdmin } from '../auth/key-admin.js';
import { SlidingWindowLimiter } from '../limits/sliding-window.js';
import { GlyphStore } from '../resources/glyphs.js';
import { BundledStyle } from '../resources/styles.js';
import { Router } from '../http/router.js';
import { Pipeline } from '../http/pipeline.js';
import { registerAll } from '../http/routes/index.js';
import type { MetricsRegistry } from '../ops/metrics.js';
import { metricsRoute } from '../ops/metrics-http.js';
import { readQuotas } from '../ops/quotas.js';
import type { RequestMetrics } from '../ops/request-metrics.js';
import type { Services } from '../services.js';
import { sqlCheck, type Stores } from './stores.js';
import type { Places } from './places.js';
import type { Routing } from './routing.js';
import type { Tiles } from './tiles.js';

interface Parts {
  clock: Clock;
  log: Logger;
  stores: Stores;
  hot: HotTier;
  places: Places;
  routing: Routing;
  tiles: Tiles;
}

/** What the route modules see: the engines, and the health, readiness and quotas read from the stores. */
export function routeServices(config: Config, { clock, log, stores, hot, places, routing, tiles }: Parts): Services {
  const { cluster, nowS } = stores;
  const keyAdmin = new KeyAdmin(stores.keys, nowS);
  return {
    config,
    clock,
    log,
    auth: stores.auth,
    pools: places.pools,
    directions: routing.directions,
    keyAdmin,
    keys: cluster ? new SharedKeyAdmin(cluster.keys, cluster.events, nowS) : keyAdmin,
    places: places.service,
    photos: places.photos,
    tiles: tiles.tiles,
    staticMaps: tiles.staticMaps,
    glyphs: new GlyphStore(),
    style: new BundledStyle(),
    health: () => ({
      ...(cluster ? cluster.health() : { postgres: sqlCheck(stores.db), redis: hot.check() }),
      svc_wired: config.engine_enabled,
    }),
    hotTier: () => hot.stats(),
    readiness: () => {
      const placesReady = places.ready();
      return { routing: routing.state(), places: placesReady ? 'ready' : 'loading' };
    },
    quotas: (nowMs) => (cluster ? cluster.quotas(nowMs) : readQuotas(config.data_dir, nowMs)),
  };
}

/** The router with every route (and /metrics), behind the request pipeline. */
export function httpPipeline(
  services: Services,
  stores: Stores,
  requests: RequestMetrics,
  metrics: MetricsRegistry,
): Pipeline {
  const { config, clock, log } = services;
  const { auth, meter, cluster } = stores;
  const router = new Router();
  registerAll(router, services);
  const pipeline = new Pipeline({
    router,
    auth,
    meter,
    clock,
    log,
    keyLimiter: cluster?.limiter ?? new SlidingWindowLimiter(),
    dailyQuota: cluster?.quota,
    ipLimiter: new SlidingWindowLimiter(),
    engineEnabled: config.engine_enabled,
    corsOrigins: config.http.cors_origins,
    tileIpPerMinute: config.limits.tile_ip_per_minute,
    bodyLimitBytes: config.http.body_limit_bytes,
    requestTimeoutMs: config.http.request_timeout_ms,
    metrics: requests,
    logRequests: config.log.requests,
  });
  router.add(metricsRoute(metrics));
  return pipeline;
}
