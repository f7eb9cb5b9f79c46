import type { LatLng } from '../../core/geo.js';
import { instruction, type InstructionInput, type Modifier } from '../answer/instructions.js';
import type { EngineResult, EnginePath, Maneuver, RouteOptions, RoutingEngine } from '../types.js';
import { decodePolyline, fetchJson, trimSlash } from './http.js';
import { overviewLine } from '../answer/overview.js';
import { enginePath } from '../answer/route-record.js';

/** Valhalla `/route` (costing auto, alternates), shape in polyline6, lengths in kilometres. */
interface ValhallaManeuver {
  type: number;
  instruction?: string;
  street_names?: string[];
  length: number; // km
  time: number; // s
  begin_shape_index: number;
  roundabout_exit_count?: number;
}
interface ValhallaTrip {
  status: number;
  legs: Array<{ maneuvers: ValhallaManeuver[]; shape: string; summary: { length: number; time: number } }>;
  summary: { length: number; time: number };
}
interface ValhallaResponse {
  trip?: ValhallaTrip;
  alternates?: Array<{ trip: ValhallaTrip }>;
  error_code?: number;
  error?: string;
}

/**
 * Valhalla error codes meaning "valid request, no route" (the ones its src/exceptions.cc answers in OSRM form as
 * NoRoute / NoSegment): locations in unconnected regions (170, which loki's route action throws before any search),
 * no road near a location (171), no path (442), no exact match of a traced path (443).
 */
const NO_ROUTE = new Set([170, 171, 442, 443]);

/** Valhalla maneuver type number -> OSRM-style type and modifier. */
function mapType(t: number): { type: InstructionInput['type']; modifier?: Modifier } {
  if (t >= 1 && t <= 3) return { type: 'depart' };
  if (t >= 4 && t <= 6) return { type: 'arrive' };
  const turn: Record<number, Modifier> = {
    9: 'slight right',
    10: 'right',
    11: 'sharp right',
    12: 'uturn',
    13: 'uturn',
    14: 'sharp left',
    15: 'left',
    16: 'slight left',
    18: 'slight right',
    19: 'slight left',
    20: 'slight right',
    21: 'slight left',
    17: 'straight',
  };
  if (turn[t]) return { type: 'turn', modifier: turn[t] };
  if (t === 7 || t === 8 || t === 22 || t === 29) return { type: 'continue', modifier: 'straight' };
  if (t === 23) return { type: 'fork', modifier: 'slight right' };
  if (t === 24) return { type: 'fork', modifier: 'slight left' };
  if (t === 25 || t === 37) return { type: 'merge', modifier: 'slight right' };
  if (t === 38) return { type: 'merge', modifier: 'slight left' };
  if (t === 26) return { type: 'roundabout' };
  return { type: 'continue', modifier: 'straight' };
}

export function valhallaEngine(baseUrl: string, timeoutMs: number): RoutingEngine {
  return {
    name: 'valhalla',
    version: baseUrl,
    async route(from: LatLng, to: LatLng, opts): Promise<EngineResult> {
      const req = {
        locations: [
          { lat: from.lat, lon: from.lng },
          { lat: to.lat, lon: to.lng },
        ],
        costing: 'auto',
        alternates: opts.alternatives,
        // instruction text is generated here in en or ar, so the upstream narrative language does not matter
        directions_options: { units: 'kilometers', language: 'en-US' },
      };
      const { status, body } = await fetchJson(
        `${trimSlash(baseUrl)}/route`,
        { method: 'POST', body: JSON.stringify(req), headers: { 'Content-Type': 'application/json' } },
        timeoutMs,
      );
      const r = body as ValhallaResponse;
      if (r.error_code !== undefined && NO_ROUTE.has(r.error_code)) return { kind: 'unroutable' };
      if (status !== 200 || !r.trip) throw new Error(`valhalla: ${status} ${r.error_code ?? ''} ${r.error ?? ''}`);
      const trips = [r.trip, ...(r.alternates ?? []).map((a) => a.trip)].slice(0, 1 + opts.alternatives);
      return { kind: 'ok', paths: trips.map((t, i) => toPath(t, i, opts)) };
    },
  };
}

function toPath(trip: ValhallaTrip, i: number, { locale, overview }: RouteOptions): EnginePath {
  const coordinates: Array<[number, number]> = [];
  const maneuvers: Maneuver[] = [];
  for (const leg of trip.legs) {
    const shape = decodePolyline(leg.shape, 6);
    for (const m of leg.maneuvers) {
      const { type, modifier } = mapType(m.type);
      if (m.type === 27 && maneuvers.length) {
        // roundabout exit: folded into the roundabout step
        maneuvers[maneuvers.length - 1]!.distance_m += m.length * 1000;
        maneuvers[maneuvers.length - 1]!.duration_s += m.time;
        continue;
      }
      const name = m.street_names?.[0] ?? '';
      const exit = m.roundabout_exit_count ?? 1;
      maneuvers.push({
        type,
        ...(modifier && type !== 'depart' && type !== 'arrive' ? { modifier } : {}),
        ...(type === 'roundabout' ? { exit } : {}),
        instruction: instruction(
          { type, modifier, exit, name, bearing: bearingAt(shape, m.begin_shape_index) },
          locale,
        ),
        distance_m: m.length * 1000,
        duration_s: m.time,
        street_name: name,
        location: shape[m.begin_shape_index] ?? shape[0]!,
      });
    }
    for (const c of shape) {
      const last = coordinates[coordinates.length - 1];
      if (!last || last[0] !== c[0] || last[1] !== c[1]) coordinates.push(c);
    }
  }
  return enginePath({
    label: i === 0 ? 'Fastest' : `Alternative ${i}`,
    line: overviewLine(coordinates, overview),
    distance_m: trip.summary.length * 1000,
    duration_s: trip.summary.time,
    maneuvers,
  });
}

function bearingAt(shape: Array<[number, number]>, i: number): number {
  const a = shape[i],
    b = shape[i + 1];
  if (!a || !b) return 0;
  const toRad = Math.PI / 180;
  const y = Math.sin((b[0] - a[0]) * toRad) * Math.cos(b[1] * toRad);
  const x =
    Math.cos(a[1] * toRad) * Math.sin(b[1] * toRad) -
    Math.sin(a[1] * toRad) * Math.cos(b[1] * toRad) * Math.cos((b[0] - a[0]) * toRad);
  return (Math.atan2(y, x) / toRad + 360) % 360;
}
