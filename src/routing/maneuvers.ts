import { isJunction } from './chains.js';
import { className } from './profile.js';
import type { RoadGraph } from './graph.js';
import { instruction, modifierOf, type InstructionInput, type Locale } from './instructions.js';
import type { RoutePath } from './path.js';
import type { Maneuver } from './types.js';

/**
 * Turn-by-turn maneuvers in OSRM's model, derived from the route's pieces and the junctions they pass:
 * depart, turn (with modifier), continue (name change going on), roundabout (with exit number), merge (link onto
 * a motorway/trunk), fork (two near-straight choices), arrive. A maneuver covers the road from its point to the
 * next maneuver; distances and durations come from rounded cumulative sums, so they add up to the route's
 * totals exactly (to the rounding unit).
 */
export function maneuvers(g: RoadGraph, p: RoutePath, locale: Locale): Maneuver[] {
  const n = p.n,
    way = p.way,
    pts = p.pts;
  const nameOf = (w: number) => streetName(g, w, locale);
  /** Bearing of piece i (from point i to point i + 1). */
  const brg = (i: number) => bearingOf(pts[2 * i]!, pts[2 * i + 1]!, pts[2 * i + 2]!, pts[2 * i + 3]!);
  const steps: Array<{ at: number; input: InstructionInput; way: number }> = [];
  const departBrg = brg(0);
  steps.push({ at: 0, way: way[0]!, input: { type: 'depart', bearing: departBrg, name: nameOf(way[0]!) } });
  let exits = 0;
  let roundaboutStep: (typeof steps)[number] | undefined;
  // the bearing of the last piece computed: piece i + 1's is piece i's way in at the next boundary
  let lastBrg = departBrg,
    lastBrgOf = 0;
  const node = p.node,
    wayRoundabout = g.wayRoundabout,
    wayName = g.wayName;
  for (let i = 0; i + 1 < n; i++) {
    const aWay = way[i]!,
      bWay = way[i + 1]!;
    const v = node[i]!;
    // Fast path: a chain node (graph.ts), a shape point inside one way with no other way out (eight in ten
    // boundaries), has nothing to announce: one bit, in an array small enough to stay in cache; nor has a junction
    // that continues the same way with no other way out.
    if (v >= 0 && !isJunction(g, v)) continue;
    const rbIn = wayRoundabout[aWay] === 1,
      rbOut = wayRoundabout[bWay] === 1;
    // Straight through a junction on the same road (most junctions of a long route): nothing to announce, and a
    // flat test says so without the spherical bearings' trigonometry, from the points at hand.
    if (!rbIn && !rbOut && wayName[aWay] === wayName[bWay] && surelyStraight(pts, i)) continue;
    // Nor where one way goes on with no other way out (its edge offsets are a cache miss, so asked second).
    if (aWay === bWay && v >= 0 && g.first[v + 1]! - g.first[v]! <= 2) continue;
    const inB = lastBrgOf === i ? lastBrg : brg(i);
    // the junction's latitude terms serve the way out and every other way from it
    const jLat = pts[2 * i + 3]! * TO_RAD,
      jCos = Math.cos(jLat),
      jSin = Math.sin(jLat);
    const outB = bearingFrom(jCos, jSin, pts[2 * i + 2]!, pts[2 * i + 4]!, pts[2 * i + 5]!);
    lastBrg = outB;
    lastBrgOf = i + 1;
    const angle = turnAngle(inB, outB);
    if (rbIn || rbOut) {
      if (!rbIn && rbOut) {
        exits = 0;
        roundaboutStep = { at: i + 1, way: bWay, input: { type: 'roundabout', exit: 1, name: '' } };
        steps.push(roundaboutStep);
      } else if (rbIn) {
        if (options(g, v, p, i, inB, jCos, jSin).some((o) => !g.wayRoundabout[o.way])) exits++;
        if (!rbOut) {
          if (roundaboutStep) {
            roundaboutStep.input.exit = Math.max(1, exits + 1);
            roundaboutStep.input.name = nameOf(bWay);
            roundaboutStep.way = bWay;
          } else {
            // the route started inside the roundabout: just say where to leave it
            steps.push({
              at: i + 1,
              way: bWay,
              input: { type: 'turn', modifier: modifierOf(angle), name: nameOf(bWay) },
            });
          }
          roundaboutStep = undefined;
        }
      }
      continue;
    }
    // Way names are interned at import (one index per distinct [name, name:ar, name:en, ref]), so equal indices
    // are equal names; different ones are a new street only when the name shown differs (a ref added or dropped
    // along the same street is no "Continue onto" the name the driver is already on).
    const renamed = g.wayName[aWay] !== g.wayName[bWay] && nameOf(aWay) !== nameOf(bWay);
    // straight on along the same road: nothing to say, and no need to look at the junction's other ways
    if (!renamed && Math.abs(angle) < 20) continue;
    const mod = modifierOf(angle);
    const inCls = className(g.wayCls[aWay]!),
      outCls = className(g.wayCls[bWay]!);
    let input: InstructionInput | undefined;
    if (mod === 'uturn') input = { type: 'turn', modifier: 'uturn', name: nameOf(bWay) };
    else if (
      inCls.endsWith('_link') &&
      (outCls === 'motorway' || outCls === 'trunk') &&
      // a merge needs the target road to exist before the junction too, i.e. the junction has a way in besides ours
      g.wayCls[aWay] !== g.wayCls[bWay]
    ) {
      input = { type: 'merge', modifier: angle < 0 ? 'slight left' : 'slight right', name: nameOf(bWay) };
    } else if (renamed && Math.abs(angle) >= 45) {
      // a sharp turn onto another street is announced whatever else the junction offers (a fork is under 45 degrees)
      input = { type: 'turn', modifier: mod, name: nameOf(bWay) };
    } else {
      const others = options(g, v, p, i, inB, jCos, jSin);
      if (others.length === 1 && Math.abs(angle) < 45 && Math.abs(others[0]!.angle) < 45) {
        input = {
          type: 'fork',
          modifier: angle < others[0]!.angle ? 'slight left' : 'slight right',
          name: nameOf(bWay),
        };
      } else if (Math.abs(angle) >= 45 && (others.length > 0 || renamed)) {
        // a real turn: either there was another way to go, or the road bends onto a new street
        if (renamed || others.some((o) => Math.abs(o.angle) < Math.abs(angle)))
          input = { type: 'turn', modifier: mod, name: nameOf(bWay) };
      } else if (renamed && nameOf(bWay)) {
        input = { type: 'continue', modifier: mod, name: nameOf(bWay) };
      }
    }
    if (input) steps.push({ at: i + 1, way: bWay, input });
  }
  // Cumulative distance/time at each step's start (and at the end), rounded once so the per-step differences sum
  // exactly: one running sum over the pieces, kept where a step starts.
  const dist = p.dist,
    time = p.time,
    ns = steps.length;
  const cumD = new Float64Array(ns + 1),
    cumT = new Float64Array(ns + 1);
  let sumD = 0,
    sumT = 0;
  for (let i = 0, k = 0; ; i++) {
    while (k < ns && steps[k]!.at === i) {
      cumD[k] = sumD;
      cumT[k++] = sumT;
    }
    if (i === n) break;
    sumD += dist[i]!;
    sumT += time[i]! / 1000;
  }
  cumD[ns] = sumD;
  cumT[ns] = sumT;
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const point = (k: number): [number, number] => [pts[2 * k]!, pts[2 * k + 1]!];
  const out: Maneuver[] = [];
  for (let k = 0; k < ns; k++) {
    const s = steps[k]!,
      input = s.input;
    // fields in this order, the optional ones only when they apply
    const m = { type: input.type } as Maneuver;
    if (input.modifier && input.type !== 'depart') m.modifier = input.modifier;
    if (input.type === 'roundabout') m.exit = input.exit;
    m.instruction = instruction(input, locale);
    m.distance_m = r1(r1(cumD[k + 1]!) - r1(cumD[k]!));
    m.duration_s = r1(r1(cumT[k + 1]!) - r1(cumT[k]!));
    m.street_name = input.name;
    m.location = point(Math.min(s.at, n - 1));
    out.push(m);
  }
  out.push({
    type: 'arrive',
    instruction: instruction({ type: 'arrive', name: '' }, locale),
    distance_m: 0,
    duration_s: 0,
    street_name: nameOf(way[n - 1]!),
    location: point(n),
  });
  return out;
}

/** The name to show: `name:ar` (Arabic) or `name:en` (English) when mapped, else `name`, else `ref`. */
export function streetName(g: RoadGraph, way: number, locale: Locale): string {
  const [name, ar, en, ref] = g.meta.names[g.wayName[way]!] ?? ['', '', '', ''];
  return (locale === 'ar' ? ar : en) || name || ref || '';
}

const TO_RAD = Math.PI / 180;

/**
 * bearingOf with the start's cos(lat1) and sin(lat1) given (in radians, as bearingOf computes them): the same
 * operations in the same order, so the same result to the bit.
 */
function bearingFrom(cosLat1: number, sinLat1: number, lng1: number, lng2: number, lat2: number): number {
  const cosLat2 = Math.cos(lat2 * TO_RAD);
  const y = Math.sin((lng2 - lng1) * TO_RAD) * cosLat2;
  const x = cosLat1 * Math.sin(lat2 * TO_RAD) - sinLat1 * cosLat2 * Math.cos((lng2 - lng1) * TO_RAD);
  return (Math.atan2(y, x) / TO_RAD + 360) % 360;
}

/** Initial bearing from (lng1, lat1) to (lng2, lat2), degrees clockwise from north. */
export function bearingOf(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const toRad = Math.PI / 180;
  const y = Math.sin((lng2 - lng1) * toRad) * Math.cos(lat2 * toRad);
  const x =
    Math.cos(lat1 * toRad) * Math.sin(lat2 * toRad) -
    Math.sin(lat1 * toRad) * Math.cos(lat2 * toRad) * Math.cos((lng2 - lng1) * toRad);
  return (Math.atan2(y, x) / toRad + 360) % 360;
}

/**
 * Whether pieces i and i + 1 meet at a turn under 15 degrees, measured flat (longitudes scaled by the junction's
 * cos(latitude)). Within a piece's length that differs from the spherical bearings by well under a degree, so
 * every junction it passes is one the exact test (turn under 20 degrees, same name) would pass too; the others get
 * the exact test.
 */
function surelyStraight(pts: Float64Array, i: number): boolean {
  const x0 = pts[2 * i]!,
    y0 = pts[2 * i + 1]!,
    x1 = pts[2 * i + 2]!,
    y1 = pts[2 * i + 3]!;
  const c = Math.cos(y1 * TO_RAD);
  const ax = (x1 - x0) * c,
    ay = y1 - y0,
    bx = (pts[2 * i + 4]! - x1) * c,
    by = pts[2 * i + 5]! - y1;
  const dot = ax * bx + ay * by;
  return dot > 0 && Math.abs(ax * by - ay * bx) < TAN_15 * dot;
}
const TAN_15 = Math.tan((15 * Math.PI) / 180);

const turnAngle = (inB: number, outB: number) => ((outB - inB + 540) % 360) - 180;

/**
 * The other drivable choices at the junction between pieces i and i + 1 (excluding the taken one and going
 * back), with their turn angles from `inB`.
 */
function options(g: RoadGraph, v: number, p: RoutePath, i: number, inB: number, jCos: number, jSin: number) {
  const others: Array<{ way: number; angle: number }> = [];
  if (v < 0) return others;
  const pts = p.pts;
  const backX = pts[2 * i]!,
    backY = pts[2 * i + 1]!; // where piece i came from
  const atX = pts[2 * i + 2]!; // the junction (its latitude's cos and sin: jCos, jSin)
  const takenX = pts[2 * i + 4]!,
    takenY = pts[2 * i + 5]!; // where piece i + 1 goes
  // the nodes at those two places, when the pieces end at graph nodes: their edges are told apart without reading
  // where their heads are (a side road's coordinates are far away in memory; these two are not the only ones)
  const backNode = i > 0 ? p.node[i - 1]! : -1,
    takenNode = p.node[i + 1]!;
  for (let e = g.first[v]!; e < g.first[v + 1]!; e++) {
    const h = g.head[e]!;
    if (h === backNode || h === takenNode) continue;
    const x = g.lon[h]!,
      y = g.lat[h]!;
    if ((x === backX && y === backY) || (x === takenX && y === takenY)) continue;
    others.push({ way: g.way[e]!, angle: turnAngle(inB, bearingFrom(jCos, jSin, atX, x, y)) });
  }
  return others;
}
