import type { Config } from './config/defaults.js';
import type { Clock } from './core/clock.js';
import type { Logger } from './core/log.js';
import type { Authenticator } from './auth/authenticator.js';
import type { KeyAdmin, KeyAdminApi } from './auth/key-admin.js';
import type { Pool } from './limits/pool.js';
import type { PlacesService } from './places/types.js';
import type { DirectionsService } from './routing/directions.js';
import type { TileService } from './tiles/types.js';
import type { StaticMapRenderer } from './tiles/staticmap.js';
import type { GlyphStore } from './resources/glyphs.js';
import type { BundledStyle } from './resources/styles.js';
import type { PhotoSource } from './places/photos.js';
import type { QuotaSnapshot } from './ops/quotas.js';
import type { HotTierStats } from './cache/hot-tier.js';

interface Health {
  postgres: string;
  redis: string;
  svc_wired: boolean;
}

/**
 * What start-up still loads in the background (/readyz). `routing`: the built-in router's graph is being read or its
 * threads set up (`loading`), is in service (`ready`, also for an upstream engine), was never imported (`no_graph`)
 * or could not be read (`unavailable`); both of the last answer the degraded line. `places`: the places threads.
 */
export interface Readiness {
  routing: 'loading' | 'ready' | 'no_graph' | 'unavailable';
  places: 'loading' | 'ready';
}

/** Everything the route modules may call, built once by the composition root (app.ts). */
export interface Services {
  config: Config;
  clock: Clock;
  log: Logger;
  auth: Authenticator;
  /** Keys in this node's SQLite store (the CLI's and the tests' view on one node). */
  keyAdmin: KeyAdmin;
  /** Keys where the node keeps them: keyAdmin on one node, the shared store in a cluster. */
  keys: KeyAdminApi;
  pools: Record<'autocomplete' | 'geocode' | 'reverse' | 'place', Pool>;
  places: PlacesService;
  photos: PhotoSource;
  directions: DirectionsService;
  tiles: TileService;
  staticMaps: StaticMapRenderer;
  glyphs: GlyphStore;
  style: BundledStyle;
  health(): Health;
  /** The hot tier's hit rates since start and what it holds now (GET /admin/status). */
  hotTier(): HotTierStats;
  readiness(): Readiness;
  /** Keys and today's usage: this node's SQLite store, or every node's in a cluster. */
  quotas(nowMs: number): QuotaSnapshot | Promise<QuotaSnapshot>;
}
