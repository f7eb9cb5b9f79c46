import type { LatLng } from '../../core/geo.js';
import { instruction, type InstructionInput, type Modifier } from '../answer/instructions.js';
import type { EngineResult, EnginePath, Maneuver, RouteOptions, RoutingEngine } from '../types.js';
import { fetchJson, trimSlash } from './http.js';
import { overviewLine } from '../answer/overview.js';
import { enginePath } from '../answer/route-record.js';

/** OSRM `/route/v1/driving` (steps, alternatives, GeoJSON geometry), mapped to engine paths with maneuvers. */
interface OsrmStep {
  distance: number;
  duration: number;
  name?: string;
  ref?: string;
  maneuver: { type: string; modifier?: string; exit?: number; location: [number, number]; bearing_after?: number };
}
interface OsrmRoute {
  distance: number;
  duration: number;
  geometry: { type: 'LineString'; coordinates: Array<[number, number]> };
  legs: Array<{ steps?: OsrmStep[] }>;
}
interface OsrmResponse {
  code: string;
  message?: string;
  routes?: OsrmRoute[];
}

/** OSRM answers these codes when the request is fine but no route exists between the points. */
const NO_ROUTE = new Set(['NoRoute', 'NoSegment']);

const TYPE: Record<string, InstructionInput['type'] | undefined> = {
  depart: 'depart',
  arrive: 'arrive',
  turn: 'turn',
  'new name': 'continue',
  continue: 'continue',
  merge: 'merge',
  'on ramp': 'turn',
  'off ramp': 'turn',
  fork: 'fork',
  'end of road': 'turn',
  roundabout: 'roundabout',
  rotary: 'roundabout',
  'roundabout turn': 'turn',
  'use lane': 'continue',
  notification: 'continue',
};

export function osrmEngine(baseUrl: string, timeoutMs: number): RoutingEngine {
  return {
    name: 'osrm',
    version: baseUrl,
    async route(from: LatLng, to: LatLng, opts): Promise<EngineResult> {
      const url =
        `${trimSlash(baseUrl)}/route/v1/driving/${from.lng},${from.lat};${to.lng},${to.lat}` +
        `?steps=true&geometries=geojson&overview=full&alternatives=${opts.alternatives > 0 ? opts.alternatives : 'false'}`;
      const { status, body } = await fetchJson(url, {}, timeoutMs);
      const r = body as OsrmResponse;
      if (NO_ROUTE.has(r.code)) return { kind: 'unroutable' };
      if (status !== 200 || r.code !== 'Ok' || !Array.isArray(r.routes))
        throw new Error(`osrm: ${status} ${r.code} ${r.message ?? ''}`);
      if (!r.routes.length) return { kind: 'unroutable' };
      return { kind: 'ok', paths: r.routes.slice(0, 1 + opts.alternatives).map((rt, i) => toPath(rt, i, opts)) };
    },
  };
}

function toPath(rt: OsrmRoute, i: number, { locale, overview }: RouteOptions): EnginePath {
  const steps = rt.legs.flatMap((l) => l.steps ?? []);
  const maneuvers: Maneuver[] = [];
  for (const s of steps) {
    const m = s.maneuver;
    const last = maneuvers[maneuvers.length - 1];
    if ((m.type === 'exit roundabout' || m.type === 'exit rotary') && last) {
      // folded into the roundabout step, which already names the exit
      last.distance_m += s.distance;
      last.duration_s += s.duration;
      continue;
    }
    const type = TYPE[m.type] ?? 'turn';
    const name = s.name || s.ref || '';
    const modifier = (m.modifier ?? 'straight') as Modifier;
    maneuvers.push({
      type,
      ...(type !== 'depart' && type !== 'arrive' && m.modifier ? { modifier } : {}),
      ...(type === 'roundabout' ? { exit: m.exit ?? 1 } : {}),
      instruction: instruction({ type, modifier, bearing: m.bearing_after ?? 0, exit: m.exit ?? 1, name }, locale),
      distance_m: s.distance,
      duration_s: s.duration,
      street_name: name,
      location: m.location,
    });
  }
  return enginePath({
    label: i === 0 ? 'Fastest' : `Alternative ${i}`,
    line: overviewLine(rt.geometry.coordinates, overview),
    distance_m: rt.distance,
    duration_s: rt.duration,
    maneuvers,
  });
}
