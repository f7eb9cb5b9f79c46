import type { LatLng } from '../core/geo.js';

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

/** One computed path between consecutive stops, as an engine returns it. */
export interface EnginePath {
  label: string;
  /**
   * The line's coordinates as JSON text, `[[lng,lat],...]`: built where the path is (a routing thread, an
   * upstream answer) so responses and the route cache embed it as it is, never re-serializing thousands of points.
   */
  line: string;
  distance_m: number;
  duration_s: number;
  maneuvers?: Maneuver[];
}

export type EngineResult = { kind: 'ok'; paths: EnginePath[] } | { kind: 'unroutable' };

export interface RouteOptions {
  alternatives: number;
  locale: 'en' | 'ar';
  /** Fires when nobody waits for the answer any more: the engine may drop or abandon the query. */
  signal?: AbortSignal;
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
  /** Starts threads or connections ahead of the first query (optional). */
  start?(): void;
  /** Reload: takes over `next`'s data in place and answers true, or false when `next` must replace this engine. */
  adopt?(next: RoutingEngine): boolean;
  /** Releases threads and files (optional); called when the engine is replaced or the app closes. */
  close?(): void;
}

export interface DirectionsRequest {
  origin: LatLng;
  dest: LatLng;
  waypoints: LatLng[];
  coarseOrigin: boolean;
  maxWaitMs?: number;
  locale: 'en' | 'ar';
  /** The requester's signal (client gone, whole-request timeout): its queries are dropped or abandoned. */
  signal?: AbortSignal;
}
