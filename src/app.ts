import type { Config } from './config/defaults.js';
import { systemClock, nowSeconds, type Clock } from './core/clock.js';
import type { Logger } from './core/log.js';
import { jsonLogger } from './ops/log.js';
import { openDb, type Db } from './store/db.js';
import { ensureSecret, prepareDataDir, readSecret } from './store/data-dir.js';
import { KeysRepo } from './store/keys-repo.js';
import { UsageRepo } from './store/usage-repo.js';
import { SessionsRepo } from './store/sessions-repo.js';
import { Authenticator } from './auth/authenticator.js';
import { KeyAdmin, SharedKeyAdmin } from './auth/key-admin.js';
import { openCluster } from './cluster.js';
import { SessionGuard } from './auth/sessions.js';
import { Meter } from './limits/meter.js';
import { Pool } from './limits/pool.js';
import { SlidingWindowLimiter } from './limits/sliding-window.js';
import { HotTier } from './cache/hot-tier.js';
import { emptyPlaces } from './places/empty.js';
import { LocalPlaces } from './places/engine.js';
import { openPlacesIndex } from './places/load.js';
import { PlacesThreads } from './places/places-threads.js';
import { PLACES_FILE } from './store/places/schema.js';
import { PhotoSource } from './places/photos.js';
import { AnswerCache } from './cache/answer-cache.js';
import { AnswerCacheRepo } from './store/answer-cache-repo.js';
import { join } from 'node:path';
import type { PlacesService } from './places/types.js';
import { DirectionsService } from './routing/directions.js';
import { createRoutingEngine, loadRoutingEngine, type RoutingTestHooks } from './routing/engine-factory.js';
import { noGraphEngine } from './routing/no-graph.js';
import type { RoutingEngine } from './routing/types.js';
import { createTileStack } from './tiles/factory.js';
import { TileStaticMap } from './render/staticmap.js';
import type { TileService } from './tiles/types.js';
import type { StaticMapRenderer } from './tiles/staticmap.js';
import { GlyphStore } from './resources/glyphs.js';
import { BundledStyle } from './resources/styles.js';
import { Router } from './http/router.js';
import { Pipeline } from './http/pipeline.js';
import { listen, type RunningServer } from './http/uws/server.js';
import { registerAll } from './http/routes/index.js';
import type { Readiness, Services } from './services.js';
import { createMetricsRegistry, type MetricsRegistry } from './ops/metrics.js';
import { RequestMetrics } from './ops/request-metrics.js';
import { ReloadHooks, type ReloadResult } from './ops/reload.js';
import { listenMetrics, metricsRoute, type MetricsServer } from './ops/metrics-http.js';
import { registerServiceGauges, timedOrigin } from './ops/app-metrics.js';
import { poolStatsOf, registerEngineMetrics } from './ops/engine-metrics.js';
import { readQuotas } from './ops/quotas.js';
import { createOrigin } from './tiles/factory.js';
import type { TileOrigin } from './tiles/origins/types.js';

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

/** JWT secrets shorter than this are refused: a guessable HMAC key would let anyone forge sessions. */
const MIN_JWT_SECRET_BYTES = 32;

/** The composition root: builds every service once from config. Used by `serve`, the self-test and the tests. */
export function createApp(config: Config, o: AppOverrides = {}): App {
  const clock = o.clock ?? systemClock;
  const log = o.log ?? jsonLogger();
  const dir = prepareDataDir(config.data_dir);
  ensureSecret(dir.secretPath);
  const db = openDb(dir.storePath);
  const keys = new KeysRepo(db);
  const nowS = () => nowSeconds(clock);

  const secret = readSecret(dir.secretPath);
  if (!secret.ok)
    log.error('tile-token secret refused; tile tokens are disabled (fail closed)', { reason: secret.reason });
  const jwtSecret = Buffer.from(config.auth.jwt_secret, 'utf8');
  if (jwtSecret.length > 0 && jwtSecret.length < MIN_JWT_SECRET_BYTES) {
    log.error(
      `auth.jwt_secret is shorter than ${MIN_JWT_SECRET_BYTES} bytes; JWT bearer auth is disabled (fail closed)`,
    );
  }

  // Several nodes: keys, usage, per-minute limits and sessions move to the shared stores (see src/cluster.ts).
  // The tile-token secret is then the cluster's (this node's own is offered in case the cluster has none yet).
  const cluster = openCluster(config.cluster, log, nowS, {
    tileTokens: { offer: secret.ok ? secret.secret : undefined },
  });
  const auth = new Authenticator({
    keys: cluster?.keys ?? keys,
    sharedStore: cluster !== undefined,
    sharedSessions: cluster?.sessions,
    sessions: new SessionGuard(new SessionsRepo(db)),
    tileSecret: cluster ? () => cluster.tileSecret() : secret.ok ? secret.secret : undefined,
    jwtSecret: jwtSecret.length >= MIN_JWT_SECRET_BYTES ? jwtSecret : undefined,
    tileTokenTtlS: config.auth.tile_token_ttl_s,
    keyCacheTtlS: config.auth.key_cache_ttl_s,
    jwtPerMinute: config.limits.jwt_per_minute,
    jwtDaily: config.limits.default_daily,
    nowS,
    log,
  });
  const meter = new Meter(cluster?.usage ?? new UsageRepo(db), log, o.meterFlushMs ?? 1000);
  const hot = new HotTier(config.cache.memory_bytes);
  const metrics = createMetricsRegistry();
  // Tiles share the hot tier (bounded by cache.memory_bytes); an injected TileService replaces the whole stack.
  const origin = o.tiles ? undefined : (o.tileOrigin ?? createOrigin(config, dir.root));
  const tileStack = o.tiles ? undefined : createTileStack(config, dir.root, hot, log, timedOrigin(origin, metrics));
  const answers = new AnswerCache(hot, new AnswerCacheRepo(db), log, o.meterFlushMs ?? 1000);
  const photos = new PhotoSource(join(dir.root, 'photos'), config.public_url, undefined, log);
  // The places index is opened when the data directory has one (`serve` makes sure of that); otherwise empty answers.
  let placesIndex = o.places ? undefined : openPlacesIndex(dir.root);
  // Searches and reverse lookups run in places threads, each with its own read-only connection to places.db.
  const placesFile = join(dir.root, PLACES_FILE);
  const placesThreads = (): PlacesThreads =>
    new PlacesThreads({
      file: placesFile,
      threads: config.places.threads,
      queue: config.places.queue,
      timeoutMs: config.http.request_timeout_ms,
    });
  let threads = placesIndex ? placesThreads() : undefined;
  const p = config.pools;
  const pools = {
    autocomplete: new Pool(
      'autocomplete',
      p.autocomplete.concurrency,
      p.autocomplete.queue,
      'AUTOCOMPLETE_BACKPRESSURE',
      log,
    ),
    geocode: new Pool('geocode', p.geocode.concurrency, p.geocode.queue, 'GEOCODE_BACKPRESSURE', log),
    reverse: new Pool('reverse', p.reverse.concurrency, p.reverse.queue, 'REVERSE_BACKPRESSURE', log),
    place: new Pool('place', p.place.concurrency, p.place.queue, 'PLACE_BACKPRESSURE', log),
  };
  // Named here (not inline) so /metrics can report their occupancy beside the places pools.
  const routePools = {
    directions: new Pool('directions', p.directions.concurrency, p.directions.queue, 'DIRECTIONS_BACKPRESSURE', log),
    prefetch: new Pool('prefetch', config.prefetch.concurrency, 0, 'DIRECTIONS_BACKPRESSURE', log),
  };
  // The built-in router's graph is loaded in the background (loadRoads below), never on the way to listening: until
  // it is in service the no-graph engine answers (the degraded line). An upstream engine needs no load.
  const builtinRouting = !o.routing && config.routing.engine === 'builtin';
  let routingState: Readiness['routing'] = builtinRouting ? 'loading' : 'ready';
  // Places threads open places.db in the background; queries sent meanwhile wait for them (not ready for /readyz).
  let placesReady = !threads;
  const requests = new RequestMetrics(metrics);
  const directions = new DirectionsService({
    // built-in router over <data>/roads.graph (no-graph engine until it is loaded or imported), or the upstream
    engine: o.routing ?? (builtinRouting ? noGraphEngine : createRoutingEngine(config.routing, dir.root, log)),
    cache: answers,
    pool: routePools.directions,
    prefetchPool: routePools.prefetch,
    prefetchTimeoutMs: config.prefetch.timeout_ms,
    log,
    alone: () => requests.inflight <= 1,
    loadWaitMs: config.routing.timeout_ms,
  });
  const sqlCheck = () => {
    try {
      return db.prepare('SELECT 1 AS ok').get() ? 'ok' : 'no answer';
    } catch (e) {
      return (e as Error).message;
    }
  };
  const keyAdmin = new KeyAdmin(keys, nowS);
  const services: Services = {
    config,
    clock,
    log,
    auth,
    pools,
    directions,
    keyAdmin,
    keys: cluster ? new SharedKeyAdmin(cluster.keys, cluster.events, nowS) : keyAdmin,
    places: o.places ?? (placesIndex ? new LocalPlaces(placesIndex, answers, photos, threads) : emptyPlaces),
    photos,
    tiles: o.tiles ?? tileStack!.tiles,
    staticMaps: o.staticMaps ?? tileStack?.staticMaps ?? new TileStaticMap(o.tiles!),
    glyphs: new GlyphStore(),
    style: new BundledStyle(),
    health: () => ({
      ...(cluster ? cluster.health() : { postgres: sqlCheck(), redis: hot.check() }),
      svc_wired: config.engine_enabled,
    }),
    hotTier: () => hot.stats(),
    readiness: () => {
      placesReady ||= threads?.warm ?? true; // once up, reopen (reload) keeps the threads answering
      return { routing: routingState, places: placesReady ? 'ready' : 'loading' };
    },
    quotas: (nowMs) => (cluster ? cluster.quotas(nowMs) : readQuotas(config.data_dir, nowMs)),
  };

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
  registerServiceGauges(
    metrics,
    [...Object.values(pools), routePools.directions, routePools.prefetch],
    () => hot.bytes,
    config.cache.memory_bytes,
  );
  // Read at each scrape from whoever owns the pools then: reload swaps the routing engine and the places threads.
  registerEngineMetrics(
    metrics,
    () => ({ routing: poolStatsOf(directions.engine), places: threads?.stats, render: poolStatsOf(origin) }),
    tileStack ? [tileStack.tiles.admission, tileStack.staticMaps.admission] : [],
  );
  meter.start();

  // A new import swaps in a new places engine; answers cached under the old index generation are never served.
  const reloads = new ReloadHooks(undefined, log);
  if (!o.places) {
    reloads.register('places', async () => {
      const next = openPlacesIndex(dir.root);
      if (!next) return 'no places index in the data directory; keeping the current engine';
      const old = placesIndex;
      if (threads)
        await threads.reopen(placesFile); // every places thread swaps in the new file
      else threads = placesThreads();
      services.places = new LocalPlaces(next, answers, photos, threads);
      placesIndex = next;
      if (old) reloads.retire(() => old.close());
      return `${next.count.toLocaleString('en-US')} places (generation ${next.generation})`;
    });
  }
  let closed = false;
  // The places threads' start: settles once none is still opening places.db (all up, or failed and queries run
  // here), or after a minute; polled, as /readyz reads it.
  const placesUp = (async () => {
    for (const until = Date.now() + 60_000; !closed && threads?.starting && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 20));
  })();
  // Start-up: the graph is read and the routing threads set up while the server already answers. A route asked
  // meanwhile waits for the engine within its own budget (DirectionsService.whileLoading), so a server that is merely
  // starting answers real routes; the engine is swapped in once a routing thread is ready.
  const engineIn = builtinRouting
    ? loadRoutingEngine(config.routing, dir.root, log, { start: true, hooks: o.routingHooks }).then(
        ({ engine, state }) => {
          if (closed) {
            engine.close?.();
            return undefined;
          }
          directions.setEngine(engine);
          return { engine, state };
        },
      )
    : undefined;
  if (engineIn) directions.whileLoading(engineIn);
  // Routes are real from the first routing thread; /readyz waits for every one of them, `loaded` also for their
  // warm-up, which starts once the places threads are up too (its CPU would slow their start). The warm-up yields
  // to real queries (PooledRouter.warmUp).
  const loadRoads = async (): Promise<void> => {
    const loadedEngine = await engineIn;
    if (!loadedEngine) return;
    const { engine, state } = loadedEngine;
    await engine.whenWarm?.();
    // Ready once every routing thread is set up: the warm-up that follows yields to real queries (they never wait
    // behind it), so /readyz need not wait for it; `loaded` does.
    routingState = state;
    if (config.routing.warm_routes > 0 && engine.warmUp) {
      await placesUp;
      if (!closed) {
        const warm = await engine.warmUp(config.routing.warm_routes, o.routingHooks?.warmUpMaxMs);
        log.info('routing warm-up done', { routes: warm.routes, failed: warm.failed, last_error: warm.lastError });
      }
    }
  };
  const roadsLoaded = builtinRouting
    ? loadRoads().catch((e: unknown) => {
        log.error('road graph load failed; directions answer the degraded line', { error: (e as Error).message });
        routingState = 'unavailable';
      })
    : Promise.resolve();
  if (builtinRouting) {
    // Reload reads the new file in the background too; the current graph answers until it is in, then the running
    // threads adopt it. A reload during the start-up load waits for that load first.
    reloads.register('roads', async () => {
      await roadsLoaded;
      const { engine: next, state } = await loadRoutingEngine(config.routing, dir.root, log, {
        start: directions.engine === noGraphEngine, // no threads to adopt the graph: start its own first
        hooks: o.routingHooks,
      });
      if (next === noGraphEngine) {
        return state === 'unavailable'
          ? 'road graph unreadable (see the log); keeping the current engine'
          : 'no road graph in the data directory; keeping the current engine';
      }
      if (closed) {
        next.close?.();
        return 'server closing';
      }
      directions.setEngine(next);
      routingState = 'ready';
      return `road graph ${next.version ?? ''}`.trim();
    });
  }

  let server: RunningServer | undefined;
  let metricsServer: MetricsServer | undefined;
  const app: App = {
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
    async shutdown(graceMs = config.http.shutdown_grace_ms) {
      server?.close();
      server = undefined;
      const until = Date.now() + graceMs;
      while (requests.inflight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setImmediate(r)); // the last reply is written before the store closes
      app.close();
    },
    async listen() {
      await cluster?.start((id) => auth.invalidateKey(id));
      const tls = config.tls.cert || config.tls.key ? config.tls : undefined;
      server = await listen(pipeline, {
        host: config.host,
        port: config.port,
        tls,
        clientIpHeader: config.http.trusted_proxy_header || undefined,
      });
      if (config.metrics.port > 0 && !metricsServer) {
        metricsServer = await listenMetrics(metrics, config.metrics.host, config.metrics.port);
        app.metricsServer = metricsServer;
      }
      return server;
    },
    close() {
      if (closed) return;
      closed = true;
      server?.close();
      server = undefined;
      void metricsServer?.close();
      reloads.closeAll();
      meter.stop();
      answers.stop();
      placesIndex?.close();
      threads?.close();
      directions.close();
      tileStack?.close();
      if (!tileStack) services.staticMaps.close?.();
      db.close();
      void cluster?.close();
    },
  };
  return app;
}
