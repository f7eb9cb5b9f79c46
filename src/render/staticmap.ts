import { availableParallelism } from 'node:os';
import { setMaxListeners } from 'node:events';
import { AppError, isAppError } from '../core/errors.js';
import type { LatLng } from '../core/geo.js';
import { WorkerPool, isTaskAbandoned } from '../limits/worker-pool.js';
import type { StaticMapRenderer } from '../tiles/staticmap.js';
import type { TileService } from '../tiles/types.js';
import { latToY, lngToX } from './mercator.js';
import type { StaticMapSpec } from './staticmap-compose.js';
import { RENDER_NICE } from './worker-pool.js';

const PAD_PX = 28;
const MAX_ZOOM = 18;
/** A map's drawing never outlives the whole-request timeout; its requester's signal usually ends it sooner. */
const DRAW_DEADLINE_MS = 30_000;

export interface TileStaticMapOptions {
  /** Threads that decode, draw and encode maps: 0 draws in-process (tests); default the machine's parallelism. */
  threads?: number;
}

/**
 * The static map: basemap tiles fetched through the same TileService as /tiles (so they come from and warm the
 * same caches), stitched at the highest zoom where the path fits with padding, then the path drawn on top
 * (staticmap-compose.ts). Fetching the tiles happens here; decoding, drawing and encoding happen in static-map
 * threads, started on the first map, so a burst of maps never holds the event loop. Nothing is kept between calls.
 */
export class TileStaticMap implements StaticMapRenderer {
  private pool?: WorkerPool;

  constructor(
    private readonly tiles: TileService,
    private readonly o: TileStaticMapOptions = {},
  ) {}

  async render(path: LatLng[], w: number, h: number, signal?: AbortSignal): Promise<Buffer> {
    const xs = path.map((p) => lngToX(p.lng));
    const ys = path.map((p) => latToY(p.lat));
    const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const fitW = Math.max(w - 2 * PAD_PX, 16);
    const fitH = Math.max(h - 2 * PAD_PX, 16);
    let z = MAX_ZOOM;
    while (z > 0 && ((maxX - minX) * 256 * 2 ** z > fitW || (maxY - minY) * 256 * 2 ** z > fitH)) z--;
    const k = 256 * 2 ** z;
    const n = 2 ** z;
    const ox = (minX + maxX) / 2 - w / 2 / k;
    const oy = (minY + maxY) / 2 - h / 2 / k;

    const spec: StaticMapSpec = {
      w,
      h,
      tiles: [],
      px: xs.map((x) => (x - ox) * k),
      py: ys.map((y) => (y - oy) * k),
    };
    const jobs: Array<Promise<void>> = [];
    // Once one tile fails the map is lost: its other queued tiles are dropped too.
    const stop = new AbortController();
    const tileSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    setMaxListeners(0, tileSignal); // every basemap tile listens to it
    for (let ty = Math.max(0, Math.floor(oy * n)); ty <= Math.min(n - 1, Math.floor((oy + h / k) * n)); ty++) {
      for (let tx = Math.floor(ox * n); tx <= Math.floor((ox + w / k) * n); tx++) {
        const wrapped = ((tx % n) + n) % n;
        jobs.push(
          // Batch work: a person's cold tiles go first; a map nobody waits for any more drops its queued tiles.
          this.tiles
            .tile({ z, x: wrapped, y: ty, scale: 1, format: 'png', prefetch: false, lane: 'batch', signal: tileSignal })
            .then((t) => {
              // no tile here (origin has none): the land background shows
              if (!t) return;
              // a view into a larger buffer would be copied whole to the drawing thread: copy just the tile
              const b = t.bytes;
              const bytes = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b);
              spec.tiles.push({ bytes, x: Math.round((tx / n - ox) * k), y: Math.round((ty / n - oy) * k) });
            }),
        );
      }
    }
    try {
      await Promise.all(jobs);
    } catch (e) {
      stop.abort();
      const why = `static map tiles: ${isAppError(e) ? e.code : (e as Error).message}`;
      // The renderer refused or dropped a tile under load: the map is shed (503, retry), not failed (502).
      const shed = isAppError(e) && (e.code === 'TILE_BACKPRESSURE' || e.code === 'TILE_ORIGIN_TIMEOUT');
      throw new AppError(shed ? 'RENDER_BACKPRESSURE' : 'RENDER_FAILED', why);
    }
    return this.draw(spec, signal);
  }

  private async draw(spec: StaticMapSpec, signal?: AbortSignal): Promise<Buffer> {
    const threads = this.o.threads ?? availableParallelism();
    // drawn here only without threads: canvas is loaded then, not on every start
    if (threads < 1) return (await import('./staticmap-compose.js')).composeStaticMap(spec);
    this.pool ??= new WorkerPool({
      name: 'staticmap',
      here: import.meta.url,
      module: 'staticmap-worker',
      size: threads,
      // whole maps are already admitted a few at a time (admission.staticmap): the queue never fills in practice
      queue: 1024,
      shedCode: 'RENDER_BACKPRESSURE',
      timeoutMs: DRAW_DEADLINE_MS,
      init: null,
      nice: RENDER_NICE,
    });
    try {
      const png = await this.pool.run<Uint8Array>(spec, { signal });
      return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
    } catch (e) {
      if (isTaskAbandoned(e)) throw new AppError('RENDER_BACKPRESSURE', `static map not drawn: ${e.reason}`);
      throw e;
    }
  }

  close(): void {
    this.pool?.close();
  }
}
