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
  coordinates: Array<[number, number]>; // [lng, lat]
  distance_m: number;
  duration_s: number;
  maneuvers?: Maneuver[];
}

export type EngineResult = { kind: 'ok'; paths: EnginePath[] } | { kind: 'unroutable' };

/**
 * A routing engine (the built-in router over an imported road graph, or an upstream adapter). It throws on
 * generic failure; the directions service turns that into the degraded straight line, never a 5xx.
 */
export interface RoutingEngine {
  readonly name: string;
  /** Changes when the engine's answers may change (a new graph import, another upstream URL): part of cache keys. */
  readonly version?: string;
  route(from: LatLng, to: LatLng, opts: { alternatives: number; locale: 'en' | 'ar' }): Promise<EngineResult>;
}

export interface DirectionsRequest {
  origin: LatLng;
  dest: LatLng;
  waypoints: LatLng[];
  coarseOrigin: boolean;
  maxWaitMs?: number;
  locale: 'en' | 'ar';
}
