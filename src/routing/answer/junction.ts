import { bearingFrom, bearingOf, surelyStraight, TO_RAD } from './bearings.js';
import type { RoadGraph } from '../road-graph.js';
import { modifierOf, type InstructionInput, type Locale, type Modifier } from './instructions.js';
import { className } from '../profile.js';

/**
 * What a maneuver says at a junction, from the two road edges that meet there: maneuvers.ts asks along a route,
 * and the import asks for every turn between chains, so that a route passes the quiet ones without reading them
 * (route-summary.ts). Neither the route before nor after matters here, only a roundabout's exits do (maneuvers.ts).
 */

/** Road edges this short or shorter carry no geometry: a route keeps no piece for them (path.ts). */
export const ZERO_M = 0.01;

/** One side of a junction: a road edge's way, and its far end (a graph node, or -1 at a snapped point). */
export interface Side {
  way: number;
  node: number;
  x: number;
  y: number;
}

type Graph = Pick<
  RoadGraph,
  'first' | 'head' | 'lon' | 'lat' | 'way' | 'dist' | 'wayCls' | 'wayName' | 'cEdgeFirst' | 'cEdges'
>;

/** The name to show: `name:ar` (Arabic) or `name:en` (English) when mapped, else `name`, else `ref`. */
export function streetName(g: Pick<RoadGraph, 'meta' | 'wayName'>, way: number, locale: Locale): string {
  return shownNames(g.meta.names, locale)[g.wayName[way]!] ?? '';
}

/** The name shown for each interned name, by locale, per graph (a route asks for one at every maneuver). */
const shown = new WeakMap<RoadGraph['meta']['names'], Record<Locale, string[]>>();

function shownNames(names: RoadGraph['meta']['names'], locale: Locale): string[] {
  let s = shown.get(names);
  if (!s) {
    const of = (l: Locale) => names.map(([name, ar, en, ref]) => (l === 'ar' ? ar : en) || name || ref || '');
    shown.set(names, (s = { en: of('en'), ar: of('ar') }));
  }
  return s[locale];
}

const CODE_TYPES = ['turn', 'continue', 'merge', 'fork'] as const;
const CODE_MODIFIERS: Modifier[] = [
  'uturn',
  'sharp right',
  'right',
  'slight right',
  'straight',
  'slight left',
  'left',
  'sharp left',
];

/** A turn's maneuver code (route-summary.ts tSay) that says: look closer, along the route (a roundabout's exits). */
export const LOOK = 0xff;

/** junctionInput's answer as one byte: 0 for nothing, else 1 + 8 x its type + its modifier (its name aside). */
export function inputCode(x: InstructionInput | undefined): number {
  if (!x) return 0;
  const type = CODE_TYPES.indexOf(x.type as (typeof CODE_TYPES)[number]),
    mod = CODE_MODIFIERS.indexOf(x.modifier ?? 'straight');
  if (type < 0 || mod < 0) throw new Error(`no code for a ${x.type} maneuver`);
  return 1 + 8 * type + mod;
}

/** The maneuver of a code other than 0 and LOOK, onto the street `name`. */
export function codeInput(code: number, name: string): InstructionInput {
  return { type: CODE_TYPES[(code - 1) >>> 3]!, modifier: CODE_MODIFIERS[(code - 1) & 7]!, name };
}

/** Chain c's last road edge with geometry, and where it comes from (`from`: the junction c starts at). */
export function chainEnd(g: Graph, c: number, from: number, fromX: number, fromY: number): Side {
  const k0 = g.cEdgeFirst[c]!;
  let k = g.cEdgeFirst[c + 1]! - 1;
  while (k > k0 && g.dist[g.cEdges[k]!]! <= ZERO_M) k--;
  const way = g.way[g.cEdges[k]!]!;
  if (k === k0) return { way, node: from, x: fromX, y: fromY };
  const node = g.head[g.cEdges[k - 1]!]!;
  return { way, node, x: g.lon[node]!, y: g.lat[node]! };
}

/** Chain c's first road edge with geometry, and where it leads. */
export function chainStart(g: Graph, c: number): Side {
  const k1 = g.cEdgeFirst[c + 1]! - 1;
  let k = g.cEdgeFirst[c]!;
  while (k < k1 && g.dist[g.cEdges[k]!]! <= ZERO_M) k++;
  const e = g.cEdges[k]!,
    node = g.head[e]!;
  return { way: g.way[e]!, node, x: g.lon[node]!, y: g.lat[node]! };
}

const turnAngle = (inB: number, outB: number) => ((outB - inB + 540) % 360) - 180;

/**
 * The turn angle at junction v (at jx, jy) from road edge `a` onto `b`, and the junction's other drivable choices
 * (not b, not back along a) with their angles from a, computed when asked.
 */
export function junctionAngles(g: Graph, v: number, a: Side, b: Side, jx: number, jy: number) {
  const inB = bearingOf(a.x, a.y, jx, jy);
  // the junction's latitude terms serve the way out and every other way from it
  const jLat = jy * TO_RAD,
    jCos = Math.cos(jLat),
    jSin = Math.sin(jLat);
  const angle = turnAngle(inB, bearingFrom(jCos, jSin, jx, b.x, b.y));
  const others = () => {
    const out: Array<{ way: number; angle: number }> = [];
    if (v < 0) return out;
    for (let e = g.first[v]!; e < g.first[v + 1]!; e++) {
      const h = g.head[e]!;
      // told apart from a's and b's far ends by node first: a side road's coordinates are far away in memory
      if (h === a.node || h === b.node) continue;
      const x = g.lon[h]!,
        y = g.lat[h]!;
      if ((x === a.x && y === a.y) || (x === b.x && y === b.y)) continue;
      out.push({ way: g.way[e]!, angle: turnAngle(inB, bearingFrom(jCos, jSin, jx, x, y)) });
    }
    return out;
  };
  return { angle, others };
}

/**
 * What to announce where road edge `a` comes into junction v (at jx, jy) and `b` leaves it, neither on a
 * roundabout; undefined: nothing. `nameOf` gives a way's name as shown.
 */
export function junctionInput(
  g: Graph,
  v: number,
  a: Side,
  b: Side,
  jx: number,
  jy: number,
  nameOf: (way: number) => string,
): InstructionInput | undefined {
  const aWay = a.way,
    bWay = b.way;
  // Straight through a junction on the same road: nothing to announce, and a flat test says so without the
  // spherical bearings' trigonometry.
  if (g.wayName[aWay] === g.wayName[bWay] && surelyStraight(a.x, a.y, jx, jy, b.x, b.y)) return undefined;
  // Nor where one way goes on with no other way out.
  if (aWay === bWay && v >= 0 && g.first[v + 1]! - g.first[v]! <= 2) return undefined;
  const { angle, others } = junctionAngles(g, v, a, b, jx, jy);
  // Way names are interned at import (one index per distinct [name, name:ar, name:en, ref]), so equal indices
  // are equal names; different ones are a new street only when the name shown differs (a ref added or dropped
  // along the same street is no "Continue onto" the name the driver is already on).
  const renamed = g.wayName[aWay] !== g.wayName[bWay] && nameOf(aWay) !== nameOf(bWay);
  // straight on along the same road: nothing to say, and no need to look at the junction's other ways
  if (!renamed && Math.abs(angle) < 20) return undefined;
  const mod = modifierOf(angle);
  const inCls = className(g.wayCls[aWay]!),
    outCls = className(g.wayCls[bWay]!);
  if (mod === 'uturn') return { type: 'turn', modifier: 'uturn', name: nameOf(bWay) };
  if (
    inCls.endsWith('_link') &&
    (outCls === 'motorway' || outCls === 'trunk') &&
    // a merge needs the target road to exist before the junction too, i.e. the junction has a way in besides ours
    g.wayCls[aWay] !== g.wayCls[bWay]
  )
    return { type: 'merge', modifier: angle < 0 ? 'slight left' : 'slight right', name: nameOf(bWay) };
  // a sharp turn onto another street is announced whatever else the junction offers (a fork is under 45 degrees)
  if (renamed && Math.abs(angle) >= 45) return { type: 'turn', modifier: mod, name: nameOf(bWay) };
  const alt = others();
  if (alt.length === 1 && Math.abs(angle) < 45 && Math.abs(alt[0]!.angle) < 45)
    return { type: 'fork', modifier: angle < alt[0]!.angle ? 'slight left' : 'slight right', name: nameOf(bWay) };
  if (Math.abs(angle) >= 45 && (alt.length > 0 || renamed)) {
    // a real turn: either there was another way to go, or the road bends onto a new street
    if (renamed || alt.some((o) => Math.abs(o.angle) < Math.abs(angle)))
      return { type: 'turn', modifier: mod, name: nameOf(bWay) };
    return undefined;
  }
  if (renamed && nameOf(bWay)) return { type: 'continue', modifier: mod, name: nameOf(bWay) };
  return undefined;
}
