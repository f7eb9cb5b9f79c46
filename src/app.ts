import type { Config } from './config/defaults.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Logger } from './core/log.js';
import { jsonLogger } from './ops/log.js';
import type { Db } from './store/db.js';
import { AnswerCacheRepo } from './store/answer-cache-repo.js';
import { HotTier } from './cache/hot-tier.js';
import { AnswerCache } from './cache/answer-cache.js';
import type { Meter } from './limits/meter.js';
import type { PlacesService } from './places/types.js';
import type { RoutingTestHooks } from './routing/engine-factory.js';
import type { RoutingEngine } from './routing/types.js';
import type { TileService } from './tiles/types.js';
import type { StaticMapRenderer } from './tiles/staticmap.js';
import type { TileOrigin } from './tiles/origins/types.js';
import type { Pipeline } from './http/pipeline.js';
import type { RunningServer } from './http/uws/server.js';
import type { Services } from './services.js';
import { createMetricsRegistry, type MetricsRegistry } from './ops/metrics.js';
import { RequestMetrics } from './ops/request-metrics.js';
import { ReloadHooks, type ReloadResult } from './ops/reload.js';
import type { MetricsServer } from './ops/metrics-http.js';
import { openStores } from './app/stores.js';
import { buildTiles } from './app/tiles.js';
import { startPlaces } from './app/places.js';
import { startRouting } from './app/routing.js';
import { httpPipeline, routeServices } from './app/http.js';
import { registerGauges } from './app/gauges.js';
import { withLifecycle } from './app/lifecycle.js';

/** Collaborators a caller may replace (tests, self-test); everything else is built from config. */
export interface AppOverrides {
  clock?: Clock;
  log?: Logger;
  places?: PlacesService;
  routing?: RoutingEngine;
  tiles?: TileService;
  /** The origin behind the real tile stack (tests: a slow or instrumented one); by default from tiles.origin. */
  tileOrigin?: TileOrigin;
  staticMaps?: StaticMapRenderer;
  meterFlushMs?: number;
  /** Tests only (e.g. hold the road graph's background load); never set from config. */
  routingHooks?: RoutingTestHooks;
}

export interface App {
  config: Config;
  services: Services;
  pipeline: Pipeline;
  db: Db;
  meter: Meter;
  /** Prometheus registry; any component may record into it (see src/ops/metrics.ts). */
  metrics: MetricsRegistry;
  requests: RequestMetrics;
  /** Engines register here to be re-opened by reload(); places is registered by the app itself. */
  reloads: ReloadHooks;
  listen(): Promise<RunningServer>;
  /**
   * Settles when the background start-up load (road graph and routing threads, places threads, then the routing
   * warm-up) has ended, however it ended. The server answers meanwhile: routes and searches wait for their engine
   * within their own budgets. Callers that measure steady-state speed await it.
   */
  loaded: Promise<void>;
  /** The admin metrics port, when metrics.port is set and listen() ran. */
  metricsServer?: MetricsServer;
  /** Re-opens imported data (places index, and whatever else registered a hook) without a restart. */
  reload(): Promise<ReloadResult[]>;
  /** Stops accepting connections, lets in-flight requests finish (up to graceMs), then close(). */
  shutdown(graceMs?: number): Promise<void>;
  close(): void;
}

/**
 * The composition root: builds every service once from config. Used by `serve`, the self-test and the tests. Each
 * part is built in src/app/ from what the parts before it returned; the order below is the start-up order.
 */
export function createApp(config: Config, o: AppOverrides = {}): App {
  const clock = o.clock ?? systemClock;
  const log = o.log ?? jsonLogger();
  const flushMs = o.meterFlushMs ?? 1000;
  const stores = openStores(config, clock, log, flushMs);
  const hot = new HotTier(config.cache.memory_bytes);
  const metrics = createMetricsRegistry();
  const tiles = buildTiles(config, stores.root, hot, log, metrics, o);
  const answers = new AnswerCache(hot, new AnswerCacheRepo(stores.db), log, flushMs);
  const places = startPlaces(config, stores.root, answers, log, o.places);
  const requests = new RequestMetrics(metrics);
  const routing = startRouting(config, stores.root, answers, requests, log, o);
  const services = routeServices(config, { clock, log, stores, hot, places, routing, tiles });
  const pipeline = httpPipeline(services, stores, requests, metrics);
  registerGauges(metrics, config, hot, places, routing, tiles);
  stores.meter.start();

  // The engines load in the background while the server already answers (/livez at once, /readyz once loaded).
  const reloads = new ReloadHooks(undefined, log);
  places.registerReload(reloads, services);
  const closing = new AbortController();
  const placesUp = places.whenUp(closing.signal);
  const roadsLoaded = routing.load(reloads, placesUp, closing.signal);

  const { db, meter } = stores;
  return withLifecycle(
    {
      config,
      services,
      pipeline,
      db,
      meter,
      metrics,
      requests,
      reloads,
      loaded: Promise.all([roadsLoaded, placesUp]).then(() => undefined),
      reload: () => reloads.run(),
    },
    { closing, stores, answers, places, routing, tiles },
  );
}
