import { AppError, isAppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import { Pool } from '../limits/pool.js';
import { tileHash } from '../store/mbtiles.js';
import { ancestorTile } from './ancestor.js';
import { OriginError, type TileOrigin } from './origins/types.js';
import { SingleFlight } from './single-flight.js';
import { transcode } from './transcode.js';
import type { TileAnswer, TileRequest, TileService } from './types.js';
import type { WarmStore } from './warm-store.js';

export interface TieredOptions {
  hot: HotTier;
  /** The MBTiles warm tier; absent when tiles.store is false. */
  warm?: WarmStore;
  /** Absent: every miss is a 404 (no origin configured). */
  origin?: TileOrigin;
  /** How long a request waits for the origin before it gets a stand-in (or 504). */
  timeoutMs: number;
  /** Unix ms since which the origin's output is current; stored tiles written before it are produced again. */
  validSince?: () => number;
  concurrency: number;
  prefetchConcurrency: number;
  log: Logger;
}

type Produced = { bytes: Buffer; from: 'cache' | 'fresh'; hash?: string } | undefined;

/**
 * The tile serving path: hot LRU (`memory`) -> warm MBTiles (`cache`) -> origin (`fresh` / `fresh-prefetch`) -> stored
 * back in both tiers. One production per tile address at a time (single-flight), so a burst for one cold tile renders
 * it once. Speculative (X-Svc-Prefetch) misses go through their own small pool so they never delay what a user is
 * looking at. When the origin fails or is too slow, the nearest stored ancestor is cut and scaled as a degraded
 * stand-in (`ancestor-z<N>`); with none, the request fails 502/504 with Retry-After 1.
 */
export class TieredTileService implements TileService {
  private readonly flights = new SingleFlight<Produced>();
  /** ETags of the buffers the hot tier holds; weak, so an evicted tile takes its tag with it. */
  private readonly etags = new WeakMap<Buffer, string>();
  private readonly pool: Pool;
  private readonly prefetchPool: Pool;
  /** Origin calls made (tests use it to prove single-flight and caching). */
  originCalls = 0;

  constructor(private readonly o: TieredOptions) {
    this.pool = new Pool('tiles', o.concurrency, 100_000, 'TILE_ORIGIN_FAILED');
    this.prefetchPool = new Pool('tiles-prefetch', o.prefetchConcurrency, 1024, 'TILE_ORIGIN_FAILED');
  }

  async tile(r: TileRequest): Promise<TileAnswer | undefined> {
    // The origin's generation is part of the key, so a new import retires every hot entry at once.
    const key = `t:${this.o.validSince?.() ?? 0}:${r.z}/${r.x}/${r.y}@${r.scale}.${r.format}`;
    const hot = this.o.hot.get(key);
    if (hot) return { bytes: hot, source: 'memory', etag: this.etag(hot) };
    let produced: Produced;
    try {
      produced = await this.withTimeout(this.flights.run(`${r.z}/${r.x}/${r.y}@${r.scale}`, () => this.produce(r)));
    } catch (e) {
      return this.standIn(r, e);
    }
    if (!produced) return undefined;
    const bytes = await transcode(produced.bytes, r.format);
    if (bytes === produced.bytes && produced.hash) this.etags.set(bytes, `"${produced.hash}"`);
    this.o.hot.set(key, bytes);
    return {
      bytes,
      source: produced.from === 'cache' ? 'cache' : r.prefetch ? 'fresh-prefetch' : 'fresh',
      etag: this.etag(bytes),
    };
  }

  private etag(bytes: Buffer): string {
    let tag = this.etags.get(bytes);
    if (!tag) this.etags.set(bytes, (tag = `"${tileHash(bytes)}"`));
    return tag;
  }

  private async produce(r: TileRequest): Promise<Produced> {
    const scale = r.scale;
    const stored = this.o.warm?.get(r.z, r.x, r.y, scale);
    const origin = this.o.origin;
    if (stored && (!origin || stored.updatedAt >= (this.o.validSince?.() ?? 0)))
      return { bytes: stored.data, from: 'cache', hash: stored.hash || undefined };
    if (!origin) return undefined;
    const pool = r.prefetch ? this.prefetchPool : this.pool;
    let bytes: Buffer | undefined;
    try {
      bytes = await pool.run(() => {
        this.originCalls++;
        return origin.fetch(r.z, r.x, r.y, scale, AbortSignal.timeout(Math.max(this.o.timeoutMs * 3, 30_000)));
      });
    } catch (e) {
      // A stored tile from before the last import is real content: better than a stand-in while the origin is down.
      if (stored) return { bytes: stored.data, from: 'cache' };
      throw e;
    }
    if (!bytes) return undefined;
    this.o.warm?.put(r.z, r.x, r.y, scale, bytes);
    return { bytes, from: 'fresh' };
  }

  /** The request stops waiting after timeoutMs; the production carries on and stores its tile for the next request. */
  private withTimeout<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new OriginError('timeout', `no tile within ${this.o.timeoutMs} ms`)),
        this.o.timeoutMs,
      );
    });
    p.catch(() => undefined); // a late failure after the timeout is not an unhandled rejection
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  private async standIn(r: TileRequest, e: unknown): Promise<TileAnswer> {
    const timedOut = e instanceof OriginError && e.kind === 'timeout';
    if (!(e instanceof OriginError) && !isAppError(e))
      this.o.log.error('tile production failed', { error: (e as Error)?.stack ?? String(e) });
    else
      this.o.log.warn('tile origin unavailable', {
        tile: `${r.z}/${r.x}/${r.y}@${r.scale}`,
        error: (e as Error).message,
      });
    const a = this.o.warm
      ? await ancestorTile(this.o.warm, r.z, r.x, r.y, r.scale, r.format).catch(() => undefined)
      : undefined;
    if (a) return { bytes: a.bytes, source: `ancestor-z${a.z}` };
    throw new AppError(timedOut ? 'TILE_ORIGIN_TIMEOUT' : 'TILE_ORIGIN_FAILED');
  }

  close(): void {
    this.o.warm?.close();
    this.o.origin?.close?.();
  }
}
