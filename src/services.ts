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

export interface Health {
  postgres: string;
  redis: string;
  svc_wired: boolean;
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
  /** Keys and today's usage: this node's SQLite store, or every node's in a cluster. */
  quotas(nowMs: number): QuotaSnapshot | Promise<QuotaSnapshot>;
}
