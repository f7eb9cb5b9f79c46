import { AppError, isAppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { LatLng } from '../core/geo.js';
import type { Pool } from '../limits/pool.js';
import { straightLine } from './answer/degraded.js';
import { NO_ROAD_GRAPH } from './no-graph.js';
import { Serialised } from '../core/serialised.js';
import { decodeLeg, encodeLeg, pathLine, polylineBytes } from './answer/route-record.js';
import type { DirectionsRequest, EnginePath, RouteOptions, RoutingEngine } from './types.js';

const TIMED_OUT = Symbol('timed out');

/**
 * The route cache: hot LRU then SQLite (the app's AnswerCache), holding each leg as route-record.ts encodes it;
 * `tier` becomes the response's `source`.
 */
export interface RouteCache {
  /** `warm` false: the hot tier only (see RoutingEngine.local). */
  getBytes(key: string, warm?: boolean): { value: Buffer; tier: 'memory' | 'sqlite' } | undefined;
  setBytes(key: string, value: Buffer, warm?: boolean): void;
}

interface LegAnswer {
  paths: EnginePath[];
  source: 'memory' | 'sqlite' | 'fresh';
  engine: string;
}

/**
 * Cache key of one leg. The origin is reduced to a cell (4 decimals = about 11 m; 3 with coarse_origin = about
 * 110 m) so nearby starts share an answer; the destination stays at full resolution (6 decimals, ~0.1 m).
 * Engine name and version (graph build id / upstream URL), alternatives, locale and overview are part of the key,
 * so a re-import or an engine change never serves stale routes. `route4`: legs are cached as bytes
 * (route-record.ts), with the overview in the key; entries of earlier shapes are never read.
 */
function routeKey(
  engine: RoutingEngine,
  a: LatLng,
  b: LatLng,
  coarse: boolean,
  o: Pick<RouteOptions, 'alternatives' | 'locale' | 'overview'>,
): string {
  const f = coarse ? 1e3 : 1e4;
  const cell = `${Math.floor(a.lat * f)},${Math.floor(a.lng * f)}`;
  return `route4:${engine.name}:${engine.version ?? ''}:${o.alternatives}:${o.locale}:${o.overview}:${coarse ? 'c' : 'f'}${cell}:${b.lat.toFixed(6)},${b.lng.toFixed(6)}`;
}

export interface DirectionsDeps {
  engine: RoutingEngine;
  pool: Pool;
  prefetchPool: Pool;
  prefetchTimeoutMs: number;
  log: Logger;
  cache?: RouteCache;
  /**
   * True while the request being answered is the only one the server has in flight: its route may then be computed
   * on the HTTP thread when short (RouteOptions.inline). Absent: never.
   */
  alone?: () => boolean;
  /**
   * How long a leg without its own budget (no max_wait_ms) waits for an engine that is still loading (see
   * whileLoading) before it degrades; routing.timeout_ms.
   */
  loadWaitMs?: number;
}

/** Resolves when `p` settles or after `ms`, whichever comes first. */
async function waitAtMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** GeoJSON text around coordinates that are JSON text already. */
const lineString = (line: string) => `{"type":"LineString","coordinates":${line}}`;

/**
 * Directions in the spec's three shapes. The engine's answer races the caller's budget; on expiry or a generic
 * failure the caller gets the degraded straight line (200) while the computation carries on in the background.
 */
export class DirectionsService {
  /** Settles once the engine being loaded is in service or its load ended (see whileLoading). */
  private loading: Promise<void> | undefined;

  constructor(private readonly d: DirectionsDeps) {
    d.engine.start?.();
  }

  /**
   * The engine that will answer is still loading (start-up: the road graph is read and a routing thread set up in
   * the background): until `load` settles, a leg waits for it within its own budget (max_wait_ms, else
   * loadWaitMs) instead of answering the degraded line at once. A server that is merely starting answers real routes,
   * a little later; only a budget that runs out gives the degraded shape.
   */
  whileLoading(load: Promise<unknown>): void {
    const settled: Promise<void> = load.then(
      () => undefined,
      // the loader reports the failure itself (an error line); the legs go on with the engine in service
      (e: unknown) => this.d.log.debug('engine load ended in failure', { error: (e as Error)?.message ?? String(e) }),
    );
    this.loading = settled;
    void settled.then(() => {
      if (this.loading === settled) this.loading = undefined;
    });
  }

  get engine(): RoutingEngine {
    return this.d.engine;
  }

  /**
   * Swaps the engine (reload after an import): the running engine takes over the new one's data in place when it
   * can (the built-in router swaps the graph in its threads), otherwise the new engine starts and the old one is
   * closed. Cached routes are keyed by engine version, so none go stale.
   */
  setEngine(engine: RoutingEngine): void {
    const old = this.d.engine;
    if (old === engine || old.adopt?.(engine)) return;
    this.d.engine = engine;
    engine.start?.();
    old.close?.();
  }

  /** Stops the engine's threads (app shutdown). */
  close(): void {
    this.d.engine.close?.();
  }

  async directions(r: DirectionsRequest) {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return this.d.pool.run(async () => {
      if (r.waypoints.length) return this.multiLeg(r, elapsed);
      const res = await this.leg(r.origin, r.dest, r, r.maxWaitMs, this.d.alone?.());
      if (res === 'unroutable') throw new AppError('DIRECTIONS_UNROUTABLE');
      if (!res) return this.degraded(r.origin, r.dest, elapsed());
      // Each route object and the primary's polyline go into the answer as the bytes the engine wrote.
      const primary = res.paths[0]!;
      return {
        routes: res.paths.map((p) => new Serialised(p.json)),
        distance_meters: Math.round(primary.distance_m),
        duration_seconds: Math.round(primary.duration_s),
        polyline: new Serialised(polylineBytes(primary)),
        source: res.source,
        engine: res.engine,
        ownership_tier: 'seed',
        served_at: new Date().toISOString(),
        served_in_ms: elapsed(),
      };
    });
  }

  /** Prefetch: validation already passed; gathers run in a bounded background pool or are skipped when it is full. */
  prefetch(r: DirectionsRequest): { queued: true; legs: number } | { queued: false; reason: 'prefetch_saturated' } {
    const stops = [r.origin, ...r.waypoints, r.dest];
    const job = async () => {
      for (let i = 0; i + 1 < stops.length; i++) await this.leg(stops[i]!, stops[i + 1]!, r, this.d.prefetchTimeoutMs);
    };
    return this.d.prefetchPool.tryStart(job)
      ? { queued: true, legs: 1 + r.waypoints.length }
      : { queued: false, reason: 'prefetch_saturated' };
  }

  /**
   * One leg: the cached or computed paths, 'unroutable', or undefined when it failed or ran out of budget (the
   * caller degrades). A computation that outlives the budget still lands in the cache, so a retry is a hit.
   * `inline`: the engine may compute it on this thread (a single leg, the server otherwise idle).
   */
  private async leg(
    a: LatLng,
    b: LatLng,
    r: DirectionsRequest,
    budgetMs?: number,
    inline = false,
  ): Promise<LegAnswer | 'unroutable' | undefined> {
    if (this.loading) {
      const t0 = performance.now();
      await waitAtMost(this.loading, budgetMs ?? this.d.loadWaitMs ?? 0);
      if (budgetMs) budgetMs = Math.max(1, budgetMs - (performance.now() - t0));
    }
    const alternatives = r.waypoints.length ? 0 : 2;
    const { engine, cache } = this.d;
    const opts = { alternatives, locale: r.locale, overview: r.overview };
    const key = routeKey(engine, a, b, r.coarseOrigin, opts);
    const warm = !engine.local;
    const hit = cache?.getBytes(key, warm);
    const cached = hit && decodeLeg(hit.value);
    if (cached?.paths.length) return { paths: cached.paths, source: hit!.tier, engine: cached.engine };
    // The requester's signal goes with the query: once the client is gone (or the whole-request timeout answered)
    // the engine drops or abandons it. A max_wait_ms expiry does not: the query goes on to warm the cache.
    const query = {
      ...opts,
      inline,
      get signal() {
        return r.signal; // read only by an engine that hands the query to another thread
      },
    };
    const work = engine.route(a, b, query).then(
      (res) => {
        // Kept once the answer is on its way (the next request is read after it): encoding a leg computed on this
        // thread and the hot tier's bookkeeping are ~0.08 ms of a 1 ms local route. An engine that already encoded
        // the leg (the routing threads) hands over the buffer the cache keeps.
        if (res.kind === 'ok' && res.paths.length && cache)
          setImmediate(() => {
            try {
              cache.setBytes(key, res.encoded ?? encodeLeg(engine.name, res.paths), warm);
            } catch (e) {
              // not kept (the store closed as the server stopped, say): the next ask computes it again
              this.d.log.warn('route not cached', { error: (e as Error)?.message ?? String(e) });
            }
          });
        return res;
      },
      (e: unknown) => {
        if (isAppError(e)) throw e;
        const expected = (e as Error)?.name === NO_ROAD_GRAPH;
        this.d.log[expected ? 'debug' : 'warn']('routing failed; answering the degraded line', {
          error: (e as Error)?.message ?? String(e),
        });
        return undefined;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const budget = budgetMs
      ? new Promise<typeof TIMED_OUT>((res) => (timer = setTimeout(() => res(TIMED_OUT), budgetMs)))
      : undefined;
    const res = await (budget ? Promise.race([work, budget]) : work);
    clearTimeout(timer);
    if (res === TIMED_OUT || res === undefined) return undefined;
    if (res.kind === 'unroutable' || !res.paths.length) return 'unroutable';
    return { paths: res.paths, source: 'fresh', engine: engine.name };
  }

  private degraded(a: LatLng, b: LatLng, elapsedMs: number) {
    const s = straightLine(a, b);
    return {
      polyline: lineString(JSON.stringify(s.coordinates)),
      distance_meters: s.distance_meters,
      duration_seconds: s.duration_seconds,
      routes: [],
      partial: true,
      reason: 'degraded',
      source: 'server_straight',
      elapsed_ms: elapsedMs,
    };
  }

  private async multiLeg(r: DirectionsRequest, elapsed: () => number) {
    const stops = [r.origin, ...r.waypoints, r.dest];
    const legs = await Promise.all(
      stops.slice(1).map(async (to, i) => {
        const from = stops[i]!;
        const res = await this.leg(from, to, r, r.maxWaitMs);
        if (res === 'unroutable') throw new AppError('DIRECTIONS_UNROUTABLE');
        if (!res) {
          const s = straightLine(from, to);
          return { partial: true, line: JSON.stringify(s.coordinates), ...s };
        }
        const p = res.paths[0]!;
        return {
          partial: false,
          line: pathLine(p),
          distance_meters: p.distance_m,
          duration_seconds: p.duration_s,
        };
      }),
    );
    const partial = legs.some((l) => l.partial);
    return {
      polyline: `{"type":"MultiLineString","coordinates":[${legs.map((l) => l.line).join(',')}]}`,
      distance_meters: Math.round(legs.reduce((s, l) => s + l.distance_meters, 0)),
      duration_seconds: Math.round(legs.reduce((s, l) => s + l.duration_seconds, 0)),
      legs: legs.length,
      partial,
      source: partial ? 'svc_multileg_partial' : 'svc_multileg',
      elapsed_ms: elapsed(),
    };
  }
}
