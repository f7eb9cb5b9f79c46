import type { AppOverrides } from '../app.js';
import type { Config } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import type { Admission } from '../limits/admission.js';
import { TileStaticMap } from '../render/staticmap.js';
import { createOrigin, createTileStack } from '../tiles/factory.js';
import type { TileOrigin } from '../tiles/origins/types.js';
import type { StaticMapRenderer } from '../tiles/staticmap.js';
import type { TileService } from '../tiles/types.js';
import type { MetricsRegistry } from '../ops/metrics.js';
import { timedOrigin } from '../ops/app-metrics.js';

export interface Tiles {
  tiles: TileService;
  staticMaps: StaticMapRenderer;
  /** Undefined when a TileService was injected; /metrics reads its render threads. */
  origin: TileOrigin | undefined;
  /** The tile stack's admission control; none for an injected TileService. */
  admissions: Admission[];
  close(): void;
}

/** Everything behind /tiles and /staticmap: the origin (timed for /metrics) and the tile stack over the hot tier. */
export function buildTiles(
  config: Config,
  root: string,
  hot: HotTier,
  log: Logger,
  metrics: MetricsRegistry,
  o: Pick<AppOverrides, 'tiles' | 'tileOrigin' | 'staticMaps'>,
): Tiles {
  // Tiles share the hot tier (bounded by cache.memory_bytes); an injected TileService replaces the whole stack.
  const origin = o.tiles ? undefined : (o.tileOrigin ?? createOrigin(config, root));
  const tileStack = o.tiles ? undefined : createTileStack(config, root, hot, log, timedOrigin(origin, metrics));
  const staticMaps = o.staticMaps ?? tileStack?.staticMaps ?? new TileStaticMap(o.tiles!);
  return {
    tiles: o.tiles ?? tileStack!.tiles,
    staticMaps,
    origin,
    admissions: tileStack ? [tileStack.tiles.admission, tileStack.staticMaps.admission] : [],
    close() {
      tileStack?.close();
      if (!tileStack) staticMaps.close?.();
    },
  };
}
