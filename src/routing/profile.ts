/**
 * The car profile: which OSM ways a car may use, how fast, and in which direction. Speeds are typical free-flow
 * speeds (km/h) per highway class, close to OSRM's car.lua defaults, and are capped by a parsed `maxspeed`.
 * Routing owns the profile (maneuvers name road classes by it); the roads importer applies it when building the graph.
 */

/** Highway classes a car may drive on, with a default speed (km/h). The index is the stored class code. */
const HIGHWAY_CLASSES: ReadonlyArray<readonly [string, number]> = [
  ['motorway', 90],
  ['motorway_link', 45],
  ['trunk', 85],
  ['trunk_link', 40],
  ['primary', 65],
  ['primary_link', 30],
  ['secondary', 55],
  ['secondary_link', 25],
  ['tertiary', 40],
  ['tertiary_link', 20],
  ['unclassified', 25],
  ['residential', 25],
  ['living_street', 10],
  ['service', 15],
  ['road', 20],
  ['motorway_junction', 45],
  ['ferry', 8],
];
const CLASS_INDEX = new Map(HIGHWAY_CLASSES.map(([c], i) => [c, i]));
export const classCode = (highway: string): number => CLASS_INDEX.get(highway) ?? -1;
export const className = (code: number): string => HIGHWAY_CLASSES[code]?.[0] ?? 'road';

const DENIED = new Set([
  'no',
  'private',
  'agricultural',
  'forestry',
  'delivery',
  'emergency',
  'psv',
  'bus',
  'military',
]);
/** `destination`, `customers`, `permissive`, `yes`, `designated` all let a car through (destination traffic allowed). */
const NO_SERVICE = new Set(['parking_aisle', 'driveway', 'emergency_access']);

export interface WayProfile {
  cls: number;
  speedKmh: number;
  /** 1: forward only, -1: backward only, 0: both directions. */
  oneway: 0 | 1 | -1;
  roundabout: boolean;
}

const MPH = 1.609344;

/**
 * Parses `maxspeed` to km/h: "50", "50 km/h", "30 mph", "none" (unlimited, keep the class default), and national
 * zone values like "RU:urban" / "DE:rural" are not numbers we can trust, so they fall back to the class default.
 */
export function parseMaxspeed(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const v = raw.split(';')[0]!.trim().toLowerCase();
  const m = /^(\d+(?:\.\d+)?)\s*(km\/h|kmh|kph|mph|knots)?$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!(n > 0) || n > 300) return undefined;
  return m[2] === 'mph' ? n * MPH : m[2] === 'knots' ? n * 1.852 : n;
}

/** Whether the tags forbid motor cars: the most specific key wins (motorcar > motor_vehicle > vehicle > access). */
function carDenied(t: Record<string, string>): boolean {
  for (const k of ['motorcar', 'motor_vehicle', 'vehicle', 'access']) {
    const v = t[k];
    if (v !== undefined) return DENIED.has(v.split(';')[0]!.trim());
  }
  return false;
}

function parseOneway(t: Record<string, string>, cls: string, roundabout: boolean): 0 | 1 | -1 {
  const v = (t['oneway:motorcar'] ?? t['oneway:motor_vehicle'] ?? t.oneway ?? '').toLowerCase();
  if (v === 'yes' || v === '1' || v === 'true') return 1;
  if (v === '-1' || v === 'reverse') return -1;
  if (v === 'no' || v === '0' || v === 'false' || v === 'reversible' || v === 'alternating') return 0;
  // Implied one-ways: roundabouts, and motorways (each carriageway is mapped as its own way).
  if (roundabout || cls === 'motorway' || cls === 'motorway_link') return 1;
  return 0;
}

/**
 * The car profile of a way, or undefined when a car may not use it. Ferries (`route=ferry`) are excluded unless
 * `ferries` is set, and then run at a slow nominal speed (their real timetable is unknown).
 */
export function carProfile(t: Record<string, string>, opts: { ferries?: boolean } = {}): WayProfile | undefined {
  let hw = t.highway;
  if (!hw && t.route === 'ferry') {
    if (!opts.ferries) return undefined;
    hw = 'ferry';
  }
  if (!hw) return undefined;
  const cls = classCode(hw);
  if (cls < 0 || hw === 'motorway_junction') return undefined;
  if (t.area === 'yes' || carDenied(t)) return undefined;
  if (hw === 'service' && NO_SERVICE.has(t.service ?? '')) return undefined;
  if (t.impassable === 'yes' || t.status === 'impassable') return undefined;
  const roundabout = t.junction === 'roundabout' || t.junction === 'circular';
  const def = HIGHWAY_CLASSES[cls]![1];
  const max = parseMaxspeed(t['maxspeed:forward'] ?? t.maxspeed);
  // A posted limit is an upper bound; real average speeds sit below it (junctions, traffic), hence 0.8.
  const speedKmh = max !== undefined ? Math.max(5, Math.min(def * 1.25, max * 0.8)) : def;
  return { cls, speedKmh, oneway: parseOneway(t, hw, roundabout), roundabout };
}

/** Tag keys the importer asks the PBF parser for (everything else is dropped while decoding). */
export const WAY_TAG_KEYS = [
  'highway',
  'route',
  'area',
  'access',
  'vehicle',
  'motor_vehicle',
  'motorcar',
  'service',
  'impassable',
  'status',
  'junction',
  'maxspeed',
  'maxspeed:forward',
  'oneway',
  'oneway:motorcar',
  'oneway:motor_vehicle',
  'name',
  'name:ar',
  'name:en',
  'ref',
];
export const RELATION_TAG_KEYS = ['type', 'restriction', 'restriction:motorcar', 'except'];
