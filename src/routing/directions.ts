import { AppError, isAppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { LatLng } from '../core/geo.js';
import type { Pool } from '../limits/pool.js';
import { straightLine } from './degraded.js';
import type { DirectionsRequest, EnginePath, RoutingEngine } from './types.js';

const TIMED_OUT = Symbol('timed out');

export interface DirectionsDeps {
  engine: RoutingEngine;
  pool: Pool;
  prefetchPool: Pool;
  prefetchTimeoutMs: number;
  log: Logger;
}

const lineString = (coordinates: Array<[number, number]>) => JSON.stringify({ type: 'LineString', coordinates });

/**
 * Directions in the spec's three shapes. The engine's answer races the caller's budget; on expiry or a generic
 * failure the caller gets the degraded straight line (200) while the computation carries on in the background.
 */
export class DirectionsService {
  constructor(private readonly d: DirectionsDeps) {}

  async directions(r: DirectionsRequest) {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return this.d.pool.run(async () => {
      if (r.waypoints.length) return this.multiLeg(r, elapsed);
      const res = await this.leg(r.origin, r.dest, r, r.maxWaitMs);
      if (res === 'unroutable') throw new AppError('DIRECTIONS_UNROUTABLE');
      if (!res) return this.degraded(r.origin, r.dest, elapsed());
      const routes = res.map((p) => ({
        label: p.label,
        distance_meters: Math.round(p.distance_m),
        duration_seconds: Math.round(p.duration_s),
        polyline: lineString(p.coordinates),
        ...(p.maneuvers ? { maneuvers: p.maneuvers } : {}),
      }));
      const primary = routes[0]!;
      return {
        routes,
        distance_meters: primary.distance_meters,
        duration_seconds: primary.duration_seconds,
        polyline: primary.polyline,
        source: 'fresh',
        engine: this.d.engine.name,
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
    return this.d.prefetchPool.tryStart(job) ? { queued: true, legs: 1 + r.waypoints.length } : { queued: false, reason: 'prefetch_saturated' };
  }

  /** One leg: paths, 'unroutable', or undefined when it failed or ran out of budget (caller degrades). */
  private async leg(a: LatLng, b: LatLng, r: DirectionsRequest, budgetMs?: number): Promise<EnginePath[] | 'unroutable' | undefined> {
    const work = this.d.engine.route(a, b, { alternatives: r.waypoints.length ? 0 : 2, locale: r.locale }).catch((e: unknown) => {
      if (isAppError(e)) throw e;
      this.d.log.warn('routing failed; answering the degraded line', { error: (e as Error)?.message ?? String(e) });
      return undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const budget = budgetMs
      ? new Promise<typeof TIMED_OUT>((res) => (timer = setTimeout(() => res(TIMED_OUT), budgetMs)))
      : undefined;
    const res = await (budget ? Promise.race([work, budget]) : work);
    clearTimeout(timer);
    if (res === TIMED_OUT || res === undefined) return undefined;
    return res.kind === 'unroutable' ? 'unroutable' : res.paths.length ? res.paths : 'unroutable';
  }

  private degraded(a: LatLng, b: LatLng, elapsedMs: number) {
    const s = straightLine(a, b);
    return {
      polyline: lineString(s.coordinates),
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
        if (!res) return { partial: true, ...straightLine(from, to) };
        const p = res[0]!;
        return { partial: false, coordinates: p.coordinates, distance_meters: p.distance_m, duration_seconds: p.duration_s };
      }),
    );
    const partial = legs.some((l) => l.partial);
    return {
      polyline: JSON.stringify({ type: 'MultiLineString', coordinates: legs.map((l) => l.coordinates) }),
      distance_meters: Math.round(legs.reduce((s, l) => s + l.distance_meters, 0)),
      duration_seconds: Math.round(legs.reduce((s, l) => s + l.duration_seconds, 0)),
      legs: legs.length,
      partial,
      source: partial ? 'svc_multileg_partial' : 'svc_multileg',
      elapsed_ms: elapsed(),
    };
  }
}
