import { AppError, isAppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { HotTier } from '../cache/hot-tier.js';
import { Pool } from '../limits/pool.js';
import { Admission, isAdmissionRefused, type Lane, type Ticket } from '../limits/admission.js';
import { tileHash } from '../store/mbtiles.js';
import { ancestorTile } from './ancestor.js';
import { OriginError, type TileOrigin } from './origins/types.js';
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
  /**
   * Origin calls in flight and queued, interactive ahead of batch, with deadlines (src/limits/admission.ts). Without
   * it, `concurrency` calls run and the rest wait (tests and embedding).
   */
  admission?: Admission;
  /** Unix ms since which the origin's output is current; stored tiles written before it are produced again. */
  validSince?: () => number;
  concurrency: number;
  prefetchConcurrency: number;
  log: Logger;
}

type Produced = { bytes: Buffer; from: 'cache' | 'fresh'; hash?: string } | undefined;

/**
 * One production of a cold tile, shared by every request for it (single-flight). It remembers how many requests
 * still wait for it. When the last one goes before the render started (client aborted, or it stopped waiting), the
 * render is dropped from the admission queue and the flight forgotten. When the last one goes after the render
 * started because its requester went away (client gone, whole-request deadline), the origin is told too: the
 * render pool drops the render if its thread has not begun it, and nothing awaits it any more. A render that
 * started and outlived tiles.timeout_ms for someone (`late`) is kept: its tile is stored for the next request.
 */
interface Flight {
  promise: Promise<Produced>;
  lane: Lane;
  waiters: number;
  started: boolean;
  late: boolean;
  abort: AbortController;
  ticket: Ticket;
}

/**
 * The tile serving path: hot LRU (`memory`) -> warm MBTiles (`cache`) -> origin (`fresh` / `fresh-prefetch`) -> stored
 * back in both tiers. One production per tile address at a time (single-flight), so a burst for one cold tile renders
 * it once. Speculative (X-Svc-Prefetch) misses go through their own small pool so they never delay what a user is
 * looking at. Origin calls pass admission control: interactive (a person waits) ahead of batch (static maps,
 * prefetch), each lane with a bounded queue and a wait budget; a render refused at once (queue full, or predicted to
 * start too late) or dropped from the queue (deadline passed) answers the stand-in. When the origin fails or is too
 * slow, the nearest stored ancestor is cut and scaled as a degraded stand-in (`ancestor-z<N>`); with none, the request
 * fails 502/504 with Retry-After 1, or 503 when refused at admission, with Retry-After from the renderer's backlog.
 */
export class TieredTileService implements TileService {
  private readonly flights = new Map<string, Flight>();
  /** ETags of the buffers the hot tier holds; weak, so an evicted tile takes its tag with it. */
  private readonly etags = new WeakMap<Buffer, string>();
  readonly admission: Admission;
  private readonly prefetchPool: Pool;
  /** Origin calls made (tests use it to prove single-flight, caching and that dropped work is never rendered). */
  originCalls = 0;

  constructor(private readonly o: TieredOptions) {
    const unbounded = { queue: 1_000_000, waitMs: 600_000 };
    this.admission =
      o.admission ??
      new Admission('tiles', { concurrency: o.concurrency, lanes: { interactive: unbounded, batch: unbounded } });
    this.prefetchPool = new Pool('tiles-prefetch', o.prefetchConcurrency, 1024, 'TILE_ORIGIN_FAILED');
  }

  /** The origin's generation is part of the key, so a new import retires every hot entry at once. */
  private hotKey(r: Pick<TileRequest, 'z' | 'x' | 'y' | 'scale' | 'format'>): string {
    return `t:${this.o.validSince?.() ?? 0}:${r.z}/${r.x}/${r.y}@${r.scale}.${r.format}`;
  }

  isHot(r: Pick<TileRequest, 'z' | 'x' | 'y' | 'scale' | 'format'>): boolean {
    return this.o.hot.has(this.hotKey(r));
  }

  hot(r: Pick<TileRequest, 'z' | 'x' | 'y' | 'scale' | 'format'>): TileAnswer | undefined {
    const hot = this.o.hot.get(this.hotKey(r));
    return hot ? { bytes: hot, source: 'memory', etag: this.etag(hot) } : undefined;
  }

  async tile(r: TileRequest): Promise<TileAnswer | undefined> {
    const hot = r.hotChecked ? undefined : this.hot(r);
    if (hot) return hot;
    const key = this.hotKey(r);
    let produced: Produced;
    try {
      produced = await this.join(`${r.z}/${r.x}/${r.y}@${r.scale}`, r);
    } catch (e) {
      if (r.signal?.aborted) throw e; // nobody to answer: no stand-in either
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

  /** Joins the flight producing this tile (or starts one) and waits for it, at most timeoutMs or until r.signal. */
  private join(key: string, r: TileRequest): Promise<Produced> {
    const lane: Lane = r.lane ?? (r.prefetch ? 'batch' : 'interactive');
    let f = this.flights.get(key);
    if (!f) {
      const flight: Flight = {
        promise: Promise.resolve(undefined),
        lane,
        waiters: 0,
        started: false,
        late: false,
        abort: new AbortController(),
        ticket: {},
      };
      flight.promise = this.produce(r, flight).finally(() => {
        if (this.flights.get(key) === flight) this.flights.delete(key);
      });
      // Waiters meet a failure themselves (tile() logs it). One that comes after every waiter gave up is logged here,
      // unless nobody wanted the tile any more (the flight was dropped); and none is an unhandled rejection.
      flight.promise.catch((e: unknown) => {
        if (flight.waiters === 0 && !flight.abort.signal.aborted)
          this.o.log.warn('tile production failed after its requests stopped waiting', {
            tile: key,
            error: (e as Error)?.message ?? String(e),
          });
      });
      this.flights.set(key, (f = flight));
    } else if (lane === 'interactive' && f.lane === 'batch') {
      f.lane = 'interactive';
      f.ticket.promote?.();
    }
    return this.wait(key, f, r.signal);
  }

  /** The request stops waiting after timeoutMs; a production already running carries on and stores its tile. */
  private wait(key: string, f: Flight, signal: AbortSignal | undefined): Promise<Produced> {
    f.waiters++;
    return new Promise<Produced>((resolve, reject) => {
      let settled = false;
      const leave = (why: 'answered' | 'late' | 'gone'): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (why === 'late') f.late = true;
        // Nobody waits any more: drop it while queued, or (requesters gone) stop the origin's work on it.
        if (--f.waiters === 0 && (!f.started || (why === 'gone' && !f.late))) {
          f.abort.abort();
          if (this.flights.get(key) === f) this.flights.delete(key);
        }
        return true;
      };
      const timer = setTimeout(() => {
        if (leave('late')) reject(new OriginError('timeout', `no tile within ${this.o.timeoutMs} ms`));
      }, this.o.timeoutMs);
      const onAbort = () => {
        if (leave('gone')) reject(new OriginError('failed', 'the requester went away'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      f.promise.then(
        (v) => {
          if (leave('answered')) resolve(v);
        },
        (e: unknown) => {
          if (leave('answered')) reject(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
  }

  private async produce(r: TileRequest, f: Flight): Promise<Produced> {
    const scale = r.scale;
    const stored = this.o.warm?.get(r.z, r.x, r.y, scale);
    const origin = this.o.origin;
    if (stored && (!origin || stored.updatedAt >= (this.o.validSince?.() ?? 0)))
      return { bytes: stored.data, from: 'cache', hash: stored.hash || undefined };
    if (!origin) return undefined;
    const render = () => {
      f.started = true;
      this.originCalls++;
      // The flight's signal (every requester gone) and a backstop for an origin that never answers.
      const signal = AbortSignal.any([f.abort.signal, AbortSignal.timeout(Math.max(this.o.timeoutMs * 3, 30_000))]);
      return origin.fetch(r.z, r.x, r.y, scale, signal);
    };
    // A static map's basemap tile (batch, not prefetch) belongs to a map admitted already: it waits up to the tile
    // timeout instead of the batch budget and is not refused on a predicted wait, so an admitted map is finished.
    const ofAdmittedMap = r.lane === 'batch' && !r.prefetch;
    const admitted = () =>
      this.admission.run(f.lane, render, {
        signal: f.abort.signal,
        ticket: f.ticket,
        ...(ofAdmittedMap ? { waitMs: this.o.timeoutMs, predict: false } : {}),
      });
    let bytes: Buffer | undefined;
    try {
      bytes = await (r.prefetch ? this.prefetchPool.run(admitted) : admitted());
    } catch (e) {
      // A stored tile from before the last import is real content: better than a stand-in while the origin is down.
      if (stored) return { bytes: stored.data, from: 'cache' };
      throw e;
    }
    if (!bytes) return undefined;
    this.o.warm?.put(r.z, r.x, r.y, scale, bytes);
    return { bytes, from: 'fresh' };
  }

  private async standIn(r: TileRequest, e: unknown): Promise<TileAnswer> {
    const timedOut =
      (e instanceof OriginError && e.kind === 'timeout') || (isAdmissionRefused(e) && e.reason === 'expired');
    if (isAdmissionRefused(e))
      this.o.log.debug('tile render refused', { tile: `${r.z}/${r.x}/${r.y}@${r.scale}`, reason: e.reason });
    else if (!(e instanceof OriginError) && !isAppError(e))
      this.o.log.error('tile production failed', { error: (e as Error)?.stack ?? String(e) });
    else
      this.o.log.warn('tile origin unavailable', {
        tile: `${r.z}/${r.x}/${r.y}@${r.scale}`,
        error: (e as Error).message,
      });
    const a = this.o.warm
      ? await ancestorTile(this.o.warm, r.z, r.x, r.y, r.scale, r.format).catch((ae: unknown) => {
          this.o.log.warn('ancestor stand-in failed', {
            tile: `${r.z}/${r.x}/${r.y}@${r.scale}`,
            error: (ae as Error)?.stack ?? String(ae),
          });
          return undefined;
        })
      : undefined;
    if (a) return { bytes: a.bytes, source: `ancestor-z${a.z}` };
    if (isAdmissionRefused(e) && !timedOut)
      throw new AppError('TILE_BACKPRESSURE', e.message, { retryAfter: e.retryAfterS });
    throw new AppError(timedOut ? 'TILE_ORIGIN_TIMEOUT' : 'TILE_ORIGIN_FAILED');
  }

  close(): void {
    this.o.warm?.close();
    this.o.origin?.close?.();
  }
}
