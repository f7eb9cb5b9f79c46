import { statSync } from 'node:fs';
import { isErrno } from '../../core/errors.js';
import type { TileRenderer } from '../../render/tile-renderer.js';
import type { RenderPool, RenderPoolStats } from '../../render/worker-pool.js';
import type { Scale } from '../warm-store.js';
import { OriginError, type TileOrigin } from './types.js';

/**
 * The built-in renderer as an origin: every tile exists (Natural Earth covers the world), always PNG. Renders on
 * the pool's threads when given one, otherwise on the calling thread (tests, tiny deployments). `signal` fires when
 * nobody waits for the tile any more: a render not begun yet is dropped, and a begun one is no longer awaited.
 */
export class RenderOrigin implements TileOrigin {
  readonly name = 'render';
  constructor(private readonly renderer: Pick<TileRenderer, 'renderTile'> | RenderPool) {}

  /** The render threads' occupancy (undefined when rendering on the calling thread). */
  get stats(): RenderPoolStats | undefined {
    return 'renderTile' in this.renderer ? undefined : this.renderer.stats;
  }

  async fetch(z: number, x: number, y: number, scale: Scale, signal?: AbortSignal): Promise<Buffer> {
    try {
      if ('render' in this.renderer) return await this.renderer.render(z, x, y, scale, 'png', signal);
      signal?.throwIfAborted();
      return await this.renderer.renderTile(z, x, y, scale, 'png');
    } catch (e) {
      const timedOut = signal?.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError';
      throw new OriginError(
        timedOut ? 'timeout' : 'failed',
        `render ${z}/${x}/${y}@${scale}x: ${(e as Error).message}`,
      );
    }
  }

  close(): void {
    if ('close' in this.renderer) this.renderer.close();
  }
}

/**
 * When the render data last changed (render.db's modification time, looked up at most every 2 s): tiles stored
 * before it were drawn from older data and are rendered again, so a new import shows without clearing caches.
 */
export function renderDataClock(renderDb: string): () => number {
  let since = 0;
  let checkedAt = -Infinity;
  return () => {
    const now = Date.now();
    if (now - checkedAt > 2000) {
      checkedAt = now;
      try {
        since = Math.floor(statSync(renderDb).mtimeMs);
      } catch (e) {
        if (!isErrno(e, 'ENOENT', 'ENOTDIR')) throw e;
        since = 0; // no render data (yet)
      }
    }
    return since;
  };
}
