import type { LatLng } from '../core/geo.js';
import type { Overview } from './answer/overview.js';

export interface Maneuver {
  type: string;
  instruction: string;
  distance_m: number;
  duration_s: number;
  street_name?: string;
  /** OSRM-style modifier for turn/continue/merge/fork ('left', 'slight right', 'uturn', ...). */
  modifier?: string;
  /** Roundabout exit number (1 = first exit). */
  exit?: number;
  /** Where the maneuver happens, [lng, lat]. */
  location?: [number, number];
}

/**
 * One computed path between consecutive stops, as an engine returns it: its route object of the answer already
 * serialised (route-record.ts builds it: pathRecord in the routing thread, enginePath for upstream engines).
 */
export interface EnginePath {
  label: string;
  distance_m: number;
  duration_s: number;
  /**
   * UTF-8 JSON of the answer's route object, `{"label","distance_meters","duration_seconds","polyline"[,"maneuvers"]}`,
   * where polyline is the GeoJSON LineString text as a JSON string.
   */
  json: Uint8Array;
  /** Byte ranges in `json`: the polyline field's value, the coordinates array inside it, the maneuvers array. */
  polylineAt: [number, number];
  coordsAt: [number, number];
  maneuversAt?: [number, number];
}

export type EngineResult =
  | {
      kind: 'ok';
      paths: EnginePath[];
      /** The paths as route-record.ts encodeLeg() wrote them, when the engine has that form: cached as it is. */
      encoded?: Buffer;
    }
  | { kind: 'unroutable' };

export interface RouteOptions {
  alternatives: number;
  locale: 'en' | 'ar';
  /** The line the paths carry: every road point, or the simplified overview (overview.ts). */
  overview: Overview;
  /** Fires when nobody waits for the answer any more: the engine may drop or abandon the query. */
  signal?: AbortSignal;
  /**
   * The calling thread has nothing else to do: a short query may run on it rather than be handed to another thread
   * (the built-in router, route-inline.ts). Engines that only call out ignore it.
   */
  inline?: boolean;
}

/**
 * A routing engine (the built-in router over an imported road graph, or an upstream adapter). It throws on
 * generic failure; the directions service turns that into the degraded straight line, never a 5xx.
 */
export interface RoutingEngine {
  readonly name: string;
  /** Changes when the engine's answers may change (a new graph import, another upstream URL): part of cache keys. */
  readonly version?: string;
  route(from: LatLng, to: LatLng, opts: RouteOptions): Promise<EngineResult>;
  /**
   * Answers from data on this machine in milliseconds (the built-in router): its routes are cached in memory only.
   * Reading one back from SQLite would save less than it costs, and writing every distinct route there would grow
   * the store by ~10 KB a route. An upstream engine's routes (a network round trip each) go to SQLite too.
   */
  readonly local?: boolean;
  /** Starts threads or connections ahead of the first query (optional). */
  start?(): void;
  /**
   * Resolves once every one of the engine's threads is set up (they answer from the first one meanwhile, but the
   * others take cores from it): /readyz waits for it. Absent = nothing to wait for.
   */
  whenWarm?(): Promise<unknown>;
  /**
   * Runs up to `routes` queries of its own (their answers dropped) so the code real queries run is compiled and
   * optimised before they come; resolves when done (optional).
   */
  warmUp?(routes: number, maxMs?: number): Promise<WarmUpReport>;
  /** Reload: takes over `next`'s data in place and answers true, or false when `next` must replace this engine. */
  adopt?(next: RoutingEngine): boolean;
  /** Releases threads and files (optional); called when the engine is replaced or the app closes. */
  close?(): void;
}

/** What a warm-up ran: its queries, and how many failed (cancelled for a real query, mostly) with the last error. */
export interface WarmUpReport {
  routes: number;
  failed: number;
  lastError: string;
}

export interface DirectionsRequest {
  origin: LatLng;
  dest: LatLng;
  waypoints: LatLng[];
  coarseOrigin: boolean;
  maxWaitMs?: number;
  locale: 'en' | 'ar';
  overview: Overview;
  /** The requester's signal (client gone, whole-request timeout): its queries are dropped or abandoned. */
  signal?: AbortSignal;
}
