import type { Config } from './config/defaults.js';
import { systemClock, nowSeconds, type Clock } from './core/clock.js';
import { jsonLogger, type Logger } from './core/log.js';
import { openDb, type Db } from './store/db.js';
import { ensureSecret, prepareDataDir, readSecret } from './store/data-dir.js';
import { KeysRepo } from './store/keys-repo.js';
import { UsageRepo } from './store/usage-repo.js';
import { SessionsRepo } from './store/sessions-repo.js';
import { Authenticator } from './auth/authenticator.js';
import { KeyAdmin } from './auth/key-admin.js';
import { SessionGuard } from './auth/sessions.js';
import { Meter } from './limits/meter.js';
import { Pool } from './limits/pool.js';
import { SlidingWindowLimiter } from './limits/sliding-window.js';
import { HotTier } from './cache/hot-tier.js';
import { emptyPlaces } from './places/empty.js';
import { LocalPlaces } from './places/engine.js';
import { openPlacesIndex } from './places/load.js';
import { PhotoSource } from './places/photos.js';
import { AnswerCache } from './cache/answer-cache.js';
import { AnswerCacheRepo } from './store/answer-cache-repo.js';
import { join } from 'node:path';
import type { PlacesService } from './places/types.js';
import { DirectionsService } from './routing/directions.js';
import { noGraphEngine } from './routing/no-graph.js';
import type { RoutingEngine } from './routing/types.js';
import { noTiles } from './tiles/no-origin.js';
import type { TileService } from './tiles/types.js';
import { noStaticMaps, type StaticMapRenderer } from './tiles/staticmap.js';
import { GlyphStore } from './resources/glyphs.js';
import { BundledStyle } from './resources/styles.js';
import { Router } from './http/router.js';
import { Pipeline } from './http/pipeline.js';
import { listen, type RunningServer } from './http/uws/server.js';
import { registerAll } from './http/routes/index.js';
import type { Services } from './services.js';

/** Collaborators a caller may replace (tests, self-test); everything else is built from config. */
export interface AppOverrides {
  clock?: Clock;
  log?: Logger;
  places?: PlacesService;
  routing?: RoutingEngine;
  tiles?: TileService;
  staticMaps?: StaticMapRenderer;
  meterFlushMs?: number;
}

export interface App {
  config: Config;
  services: Services;
  pipeline: Pipeline;
  db: Db;
  meter: Meter;
  listen(): Promise<RunningServer>;
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
  if (!secret.ok) log.error('tile-token secret refused; tile tokens are disabled (fail closed)', { reason: secret.reason });
  const jwtSecret = Buffer.from(config.auth.jwt_secret, 'utf8');
  if (jwtSecret.length > 0 && jwtSecret.length < MIN_JWT_SECRET_BYTES) {
    log.error(`auth.jwt_secret is shorter than ${MIN_JWT_SECRET_BYTES} bytes; JWT bearer auth is disabled (fail closed)`);
  }

  const auth = new Authenticator({
    keys,
    sessions: new SessionGuard(new SessionsRepo(db)),
    tileSecret: secret.ok ? secret.secret : undefined,
    jwtSecret: jwtSecret.length >= MIN_JWT_SECRET_BYTES ? jwtSecret : undefined,
    tileTokenTtlS: config.auth.tile_token_ttl_s,
    keyCacheTtlS: config.auth.key_cache_ttl_s,
    jwtPerMinute: config.limits.jwt_per_minute,
    jwtDaily: config.limits.default_daily,
    nowS,
  });
  const meter = new Meter(new UsageRepo(db), log, o.meterFlushMs ?? 1000);
  const hot = new HotTier(config.cache.memory_bytes);
  const answers = new AnswerCache(hot, new AnswerCacheRepo(db), log, o.meterFlushMs ?? 1000);
  const photos = new PhotoSource(join(dir.root, 'photos'), config.public_url);
  // The places index is opened when the data directory has one (`serve` makes sure of that); otherwise empty answers.
  const placesIndex = o.places ? undefined : openPlacesIndex(dir.root);
  const p = config.pools;
  const pools = {
    autocomplete: new Pool('autocomplete', p.autocomplete.concurrency, p.autocomplete.queue, 'AUTOCOMPLETE_BACKPRESSURE'),
    geocode: new Pool('geocode', p.geocode.concurrency, p.geocode.queue, 'GEOCODE_BACKPRESSURE'),
    reverse: new Pool('reverse', p.reverse.concurrency, p.reverse.queue, 'REVERSE_BACKPRESSURE'),
    place: new Pool('place', p.place.concurrency, p.place.queue, 'PLACE_BACKPRESSURE'),
  };
  const directions = new DirectionsService({
    engine: o.routing ?? noGraphEngine,
    pool: new Pool('directions', p.directions.concurrency, p.directions.queue, 'DIRECTIONS_BACKPRESSURE'),
    prefetchPool: new Pool('prefetch', config.prefetch.concurrency, 0, 'DIRECTIONS_BACKPRESSURE'),
    prefetchTimeoutMs: config.prefetch.timeout_ms,
    log,
  });
  const sqlCheck = () => {
    try {
      return db.prepare('SELECT 1 AS ok').get() ? 'ok' : 'no answer';
    } catch (e) {
      return (e as Error).message;
    }
  };
  const services: Services = {
    config, clock, log, auth, pools, directions,
    keyAdmin: new KeyAdmin(keys, nowS),
    places: o.places ?? (placesIndex ? new LocalPlaces(placesIndex, answers, photos) : emptyPlaces),
    photos,
    tiles: o.tiles ?? noTiles,
    staticMaps: o.staticMaps ?? noStaticMaps,
    glyphs: new GlyphStore(),
    style: new BundledStyle(),
    health: () => ({ postgres: sqlCheck(), redis: hot.check(), svc_wired: config.engine_enabled }),
  };

  const router = new Router();
  registerAll(router, services);
  const pipeline = new Pipeline({
    router, auth, meter, clock, log,
    keyLimiter: new SlidingWindowLimiter(),
    ipLimiter: new SlidingWindowLimiter(),
    engineEnabled: config.engine_enabled,
    corsOrigins: config.http.cors_origins,
    tileIpPerMinute: config.limits.tile_ip_per_minute,
    bodyLimitBytes: config.http.body_limit_bytes,
    requestTimeoutMs: config.http.request_timeout_ms,
  });
  meter.start();

  let server: RunningServer | undefined;
  return {
    config, services, pipeline, db, meter,
    async listen() {
      const tls = config.tls.cert || config.tls.key ? config.tls : undefined;
      server = await listen(pipeline, {
        host: config.host,
        port: config.port,
        tls,
        clientIpHeader: config.http.trusted_proxy_header || undefined,
      });
      return server;
    },
    close() {
      server?.close();
      meter.stop();
      answers.stop();
      placesIndex?.close();
      db.close();
    },
  };
}
