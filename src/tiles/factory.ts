import type { Config } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { Admission } from '../limits/admission.js';
import { RenderStore } from '../store/render/reader.js';
import { RENDER_DB } from '../store/render/schema.js';
import type { RendererDeps, TileRenderer } from '../render/tile-renderer.js';
import { RenderPool } from '../render/worker-pool.js';
import type { PlaceLabelSource } from '../render/place-labels.js';
import { TileStaticMap } from '../render/staticmap.js';
import { AdmittedStaticMaps } from './staticmap.js';
import { GazetteerLabels } from '../places/labels.js';
import { MbtilesOrigin } from './origins/mbtiles.js';
import { RenderOrigin, renderDataClock } from './origins/render.js';
import type { TileOrigin } from './origins/types.js';
import { XyzOrigin } from './origins/xyz.js';
import { TieredTileService } from './tiered.js';
import { WarmStore } from './warm-store.js';

/**
 * A renderer on the calling thread (no render threads), its module loaded at the first tile: canvas and the
 * basemap's data cost a start ~50 ms, and a server with render threads never draws on its HTTP thread.
 */
function lazyRenderer(deps: RendererDeps): Pick<TileRenderer, 'renderTile'> {
  let renderer: Promise<TileRenderer> | undefined;
  return {
    renderTile: async (...tile) => {
      renderer ??= import('../render/tile-renderer.js').then((m) => new m.TileRenderer(deps));
      return (await renderer).renderTile(...tile);
    },
  };
}

/** The configured origin (tiles.origin); `none` serves only what is stored. */
export function createOrigin(config: Config, dataDir: string, places?: PlaceLabelSource): TileOrigin | undefined {
  const t = config.tiles;
  switch (t.origin) {
    case 'render':
      // Render threads open the places index themselves for gazetteer labels.
      return t.render_threads > 0 && !places
        ? new RenderOrigin(new RenderPool(t.render_threads, dataDir))
        : new RenderOrigin(
            lazyRenderer({
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
  staticMaps: AdmittedStaticMaps;
  close(): void;
}

/** The admission budgets actually used: config values, with 0 counts sized from the machine's parallelism. */
export interface AdmissionBudgets {
  tiles: {
    concurrency: number;
    /** Render slots only cold tiles a person waits for may take: static maps and prefetch never hold them. */
    reserved: number;
    interactive: { queue: number; waitMs: number };
    batch: { queue: number; waitMs: number };
  };
  staticmap: { concurrency: number; queue: number; waitMs: number };
}

export function admissionBudgets(config: Config, parallelism = availableParallelism()): AdmissionBudgets {
  const a = config.admission;
  const p = Math.max(1, parallelism);
  // A lane never waits longer than a tile request does (tiles.timeout_ms).
  const wait = (ms: number) => Math.min(ms, config.tiles.timeout_ms);
  return {
    tiles: {
      concurrency: config.tiles.concurrency,
      // A quarter of the slots (at least one, once there are two) stay free of batch work.
      reserved: config.tiles.concurrency >= 2 ? Math.max(1, Math.floor(config.tiles.concurrency / 4)) : 0,
      interactive: { queue: a.interactive.queue || 1024 * p, waitMs: wait(a.interactive.wait_ms) },
      batch: { queue: a.batch.queue || 256 * p, waitMs: wait(a.batch.wait_ms) },
    },
    staticmap: {
      concurrency: a.staticmap.concurrency || 2 * p,
      queue: a.staticmap.queue || 8 * p,
      waitMs: a.staticmap.wait_ms,
    },
  };
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
  const b = admissionBudgets(config);
  const tiles = new TieredTileService({
    hot,
    warm: t.store
      ? new WarmStore(dataDir, 50, (e) => log.warn('tile store write failed', { error: e.message }))
      : undefined,
    origin: origin ?? createOrigin(config, dataDir),
    validSince: t.origin === 'render' ? renderDataClock(join(dataDir, RENDER_DB)) : undefined,
    timeoutMs: t.timeout_ms,
    concurrency: t.concurrency,
    admission: new Admission('tiles', {
      concurrency: b.tiles.concurrency,
      reserved: b.tiles.reserved,
      lanes: { interactive: b.tiles.interactive, batch: b.tiles.batch },
    }),
    prefetchConcurrency: t.prefetch_concurrency,
    log,
  });
  const maps = new Admission('staticmap', {
    concurrency: b.staticmap.concurrency,
    lanes: { batch: { queue: b.staticmap.queue, waitMs: b.staticmap.waitMs } },
  });
  const staticMaps = new AdmittedStaticMaps(new TileStaticMap(tiles), maps);
  return {
    tiles,
    staticMaps,
    close: () => {
      staticMaps.close();
      tiles.close();
    },
  };
}
