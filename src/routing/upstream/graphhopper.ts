import type { LatLng } from '../../core/geo.js';
import { instruction, type InstructionInput, type Modifier } from '../answer/instructions.js';
import type { EngineResult, EnginePath, Maneuver, RouteOptions, RoutingEngine } from '../types.js';
import { decodePolyline, fetchJson, trimSlash } from './http.js';
import { overviewLine } from '../answer/overview.js';
import { enginePath } from '../answer/route-record.js';

/** GraphHopper `/route` (profile car, points_encoded=false, instructions, alternative_route). */
interface GhInstruction {
  distance: number; // m
  time: number; // ms
  sign: number;
  text?: string;
  street_name?: string;
  interval: [number, number];
  exit_number?: number;
}
interface GhPath {
  distance: number;
  time: number;
  /**
   * GeoJSON when the server honours points_encoded=false; an encoded polyline (lat, lng; scaled by
   * `points_encoded_multiplier`, 1e5 by default) when `points_encoded` says true.
   */
  points: { type: 'LineString'; coordinates: Array<[number, number]> } | string;
  points_encoded?: boolean;
  points_encoded_multiplier?: number;
  instructions?: GhInstruction[];
}
interface GhResponse {
  paths?: GhPath[];
  message?: string;
  /** An array of {message, details} on errors; an object of counters (visited_nodes.sum ...) on success. */
  hints?: Array<{ message?: string; details?: string }> | Record<string, unknown>;
}

/** GraphHopper answers 400 with these exceptions when no route exists or a point is off the network. */
const NO_ROUTE =
  /ConnectionNotFound|PointNotFound|PointOutOfBounds|Connection between locations not found|Cannot find point/i;

/** GraphHopper instruction sign -> OSRM-style type and modifier. */
function mapSign(sign: number, first: boolean): { type: InstructionInput['type']; modifier?: Modifier } {
  if (first) return { type: 'depart' };
  const turn: Record<number, Modifier> = {
    [-3]: 'sharp left',
    [-2]: 'left',
    [-1]: 'slight left',
    1: 'slight right',
    2: 'right',
    3: 'sharp right',
    [-8]: 'uturn',
    8: 'uturn',
    [-98]: 'uturn',
  };
  if (turn[sign]) return { type: 'turn', modifier: turn[sign] };
  if (sign === 4 || sign === 5) return { type: 'arrive' };
  if (sign === 6) return { type: 'roundabout' };
  if (sign === -7) return { type: 'fork', modifier: 'slight left' };
  if (sign === 7) return { type: 'fork', modifier: 'slight right' };
  return { type: 'continue', modifier: 'straight' };
}

export function graphhopperEngine(baseUrl: string, timeoutMs: number): RoutingEngine {
  return {
    name: 'graphhopper',
    version: baseUrl,
    async route(from: LatLng, to: LatLng, opts): Promise<EngineResult> {
      const q = new URLSearchParams({
        profile: 'car',
        points_encoded: 'false',
        instructions: 'true',
        locale: opts.locale,
        calc_points: 'true',
      });
      q.append('point', `${from.lat},${from.lng}`);
      q.append('point', `${to.lat},${to.lng}`);
      if (opts.alternatives > 0) {
        q.set('algorithm', 'alternative_route');
        q.set('alternative_route.max_paths', String(1 + opts.alternatives));
      }
      const { status, body } = await fetchJson(`${trimSlash(baseUrl)}/route?${q}`, {}, timeoutMs);
      const r = body as GhResponse;
      const hints = Array.isArray(r.hints) ? r.hints : [];
      const msg = [r.message, ...hints.map((h) => `${h.details ?? ''} ${h.message ?? ''}`)].join(' ');
      if (status === 400 && NO_ROUTE.test(msg)) return { kind: 'unroutable' };
      if (status !== 200 || !Array.isArray(r.paths)) throw new Error(`graphhopper: ${status} ${r.message ?? ''}`);
      if (!r.paths.length) return { kind: 'unroutable' };
      return { kind: 'ok', paths: r.paths.slice(0, 1 + opts.alternatives).map((p, i) => toPath(p, i, opts)) };
    },
  };
}

/** The path's points as [lng, lat], whichever way the server wrote them. */
function pathCoords(p: GhPath): Array<[number, number]> {
  if (typeof p.points === 'string') {
    const precision = Math.round(Math.log10(p.points_encoded_multiplier ?? 1e5));
    return decodePolyline(p.points, precision);
  }
  return p.points.coordinates.map((c) => [c[0], c[1]] as [number, number]);
}

function toPath(p: GhPath, i: number, { locale, overview }: RouteOptions): EnginePath {
  const coords = pathCoords(p);
  const maneuvers: Maneuver[] = (p.instructions ?? []).map((ins, k) => {
    const { type, modifier } = mapSign(ins.sign, k === 0);
    const name = ins.street_name ?? '';
    const exit = ins.exit_number ?? 1;
    return {
      type,
      ...(modifier && type !== 'depart' && type !== 'arrive' ? { modifier } : {}),
      ...(type === 'roundabout' ? { exit } : {}),
      instruction: instruction({ type, modifier, exit, name, bearing: bearing(coords, ins.interval[0]) }, locale),
      distance_m: ins.distance,
      duration_s: ins.time / 1000,
      street_name: name,
      location: coords[ins.interval[0]] ?? coords[0]!,
    };
  });
  return enginePath({
    label: i === 0 ? 'Fastest' : `Alternative ${i}`,
    line: overviewLine(coords, overview),
    distance_m: p.distance,
    duration_s: p.time / 1000,
    maneuvers,
  });
}

function bearing(c: Array<[number, number]>, i: number): number {
  const a = c[i],
    b = c[i + 1];
  if (!a || !b) return 0;
  const r = Math.PI / 180;
  const y = Math.sin((b[0] - a[0]) * r) * Math.cos(b[1] * r);
  const x =
    Math.cos(a[1] * r) * Math.sin(b[1] * r) - Math.sin(a[1] * r) * Math.cos(b[1] * r) * Math.cos((b[0] - a[0]) * r);
  return (Math.atan2(y, x) / r + 360) % 360;
}
