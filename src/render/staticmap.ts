import { createCanvas, loadImage } from '@napi-rs/canvas';
import { setMaxListeners } from 'node:events';
import { AppError, isAppError } from '../core/errors.js';
import type { LatLng } from '../core/geo.js';
import type { StaticMapRenderer } from '../tiles/staticmap.js';
import type { TileService } from '../tiles/types.js';
import { latToY, lngToX } from './mercator.js';
import { COLORS } from './style.js';

const PAD_PX = 28;
const MAX_ZOOM = 18;

/**
 * The static map: basemap tiles fetched through the same TileService as /tiles (so they come from and warm the
 * same caches), stitched at the highest zoom where the path fits with padding, then the path drawn anti-aliased
 * with a white casing and start/end markers. Nothing is kept between calls, so memory stays flat.
 */
export class TileStaticMap implements StaticMapRenderer {
  constructor(private readonly tiles: TileService) {}

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

    const canvas = createCanvas(w, h);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = COLORS.land;
    ctx.fillRect(0, 0, w, h);
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
            .then(async (t) => {
              if (!t) return; // origin has no tile here: the land background shows
              const img = await loadImage(t.bytes);
              ctx.drawImage(img, Math.round((tx / n - ox) * k), Math.round((ty / n - oy) * k), 256, 256);
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

    const px = xs.map((x) => (x - ox) * k);
    const py = ys.map((y) => (y - oy) * k);
    ctx.lineJoin = 'round';
    ctx.lineCap = 'round';
    ctx.beginPath();
    px.forEach((x, i) => (i ? ctx.lineTo(x, py[i]!) : ctx.moveTo(x, py[i]!)));
    ctx.strokeStyle = 'rgba(255,255,255,0.95)';
    ctx.lineWidth = 8;
    ctx.stroke();
    ctx.strokeStyle = '#1a66d9';
    ctx.lineWidth = 5;
    ctx.stroke();
    marker(ctx, px[0]!, py[0]!, '#1e9e4a');
    marker(ctx, px[px.length - 1]!, py[py.length - 1]!, '#d93025');
    return canvas.encode('png');
  }
}

function marker(
  ctx: ReturnType<ReturnType<typeof createCanvas>['getContext']>,
  x: number,
  y: number,
  color: string,
): void {
  ctx.beginPath();
  ctx.arc(x, y, 7.5, 0, Math.PI * 2);
  ctx.fillStyle = color;
  ctx.fill();
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = '#ffffff';
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(x, y, 2.5, 0, Math.PI * 2);
  ctx.fillStyle = '#ffffff';
  ctx.fill();
}
