import type { Config } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import { join } from 'node:path';
import { RenderStore } from '../store/render/reader.js';
import { RENDER_DB } from '../store/render/schema.js';
import { TileRenderer } from '../render/tile-renderer.js';
import { RenderPool } from '../render/worker-pool.js';
import type { PlaceLabelSource } from '../render/place-labels.js';
import { TileStaticMap } from '../render/staticmap.js';
import { GazetteerLabels } from '../places/labels.js';
import { MbtilesOrigin } from './origins/mbtiles.js';
import { RenderOrigin, renderDataClock } from './origins/render.js';
import type { TileOrigin } from './origins/types.js';
import { XyzOrigin } from './origins/xyz.js';
import { TieredTileService } from './tiered.js';
import { WarmStore } from './warm-store.js';

/** The configured origin (tiles.origin); `none` serves only what is stored. */
export function createOrigin(config: Config, dataDir: string, places?: PlaceLabelSource): TileOrigin | undefined {
  const t = config.tiles;
  switch (t.origin) {
    case 'render':
      // Render threads open the places index themselves for gazetteer labels.
      return t.render_threads > 0 && !places
        ? new RenderOrigin(new RenderPool(t.render_threads, dataDir))
        : new RenderOrigin(
            new TileRenderer({
              store: RenderStore.inDataDir(dataDir),
              places: places ?? GazetteerLabels.inDataDir(dataDir),
            }),
          );
    case 'xyz':
      if (!t.xyz_url) throw new Error('tiles.origin is "xyz" but tiles.xyz_url is empty');
      return new XyzOrigin({
        url: t.xyz_url,
        userAgent: t.user_agent,
        timeoutMs: t.timeout_ms,
        retries: t.retries,
        concurrency: t.concurrency,
      });
    case 'mbtiles':
      if (!t.mbtiles_path) throw new Error('tiles.origin is "mbtiles" but tiles.mbtiles_path is empty');
      return new MbtilesOrigin(t.mbtiles_path);
    default:
      return undefined;
  }
}

export interface TileStack {
  tiles: TieredTileService;
  staticMaps: TileStaticMap;
  close(): void;
}

/** Everything behind /tiles and /staticmap, built once by the composition root. */
export function createTileStack(
  config: Config,
  dataDir: string,
  hot: HotTier,
  log: Logger,
  origin?: TileOrigin,
): TileStack {
  const t = config.tiles;
  const tiles = new TieredTileService({
    hot,
    warm: t.store
      ? new WarmStore(dataDir, 50, (e) => log.warn('tile store write failed', { error: e.message }))
      : undefined,
    origin: origin ?? createOrigin(config, dataDir),
    validSince: t.origin === 'render' ? renderDataClock(join(dataDir, RENDER_DB)) : undefined,
    timeoutMs: t.timeout_ms,
    concurrency: t.concurrency,
    prefetchConcurrency: t.prefetch_concurrency,
    log,
  });
  return { tiles, staticMaps: new TileStaticMap(tiles), close: () => tiles.close() };
}
