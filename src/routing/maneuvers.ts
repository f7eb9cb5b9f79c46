import { className } from './profile.js';
import type { RoadGraph } from './graph.js';
import { instruction, modifierOf, type InstructionInput, type Locale } from './instructions.js';
import type { Piece, RoutePath } from './path.js';
import type { Maneuver } from './types.js';

/**
 * Turn-by-turn maneuvers in OSRM's model, derived from the route's pieces and the junctions they pass:
 * depart, turn (with modifier), continue (name change going on), roundabout (with exit number), merge (link onto
 * a motorway/trunk), fork (two near-straight choices), arrive. A maneuver covers the road from its point to the
 * next maneuver; distances and durations come from rounded cumulative sums, so they add up to the route's
 * totals exactly (to the rounding unit).
 */
export function maneuvers(g: RoadGraph, p: RoutePath, locale: Locale): Maneuver[] {
  const pcs = p.pieces;
  const nameOf = (w: number) => streetName(g, w, locale);
  const steps: Array<{ at: number; input: InstructionInput; way: number }> = [];
  steps.push({
    at: 0,
    way: pcs[0]!.way,
    input: { type: 'depart', bearing: bearing(pcs[0]!), name: nameOf(pcs[0]!.way) },
  });
  let exits = 0;
  let roundaboutStep: (typeof steps)[number] | undefined;
  for (let i = 0; i + 1 < pcs.length; i++) {
    const a = pcs[i]!,
      b = pcs[i + 1]!;
    const v = a.node;
    // Fast path: a shape point inside one way with no other way out (most boundaries) has nothing to announce.
    if (a.way === b.way && v >= 0 && g.first[v + 1]! - g.first[v]! <= 2) continue;
    const rbIn = g.wayRoundabout[a.way] === 1,
      rbOut = g.wayRoundabout[b.way] === 1;
    const angle = turnAngle(bearing(a), bearing(b));
    const opts = options(g, v, a, b);
    if (rbIn || rbOut) {
      if (!rbIn && rbOut) {
        exits = 0;
        roundaboutStep = { at: i + 1, way: b.way, input: { type: 'roundabout', exit: 1, name: '' } };
        steps.push(roundaboutStep);
      } else if (rbIn) {
        if (opts.others.some((o) => !g.wayRoundabout[o.way])) exits++;
        if (!rbOut) {
          if (roundaboutStep) {
            roundaboutStep.input.exit = Math.max(1, exits + 1);
            roundaboutStep.input.name = nameOf(b.way);
            roundaboutStep.way = b.way;
          } else {
            // the route started inside the roundabout: just say where to leave it
            steps.push({
              at: i + 1,
              way: b.way,
              input: { type: 'turn', modifier: modifierOf(angle), name: nameOf(b.way) },
            });
          }
          roundaboutStep = undefined;
        }
      }
      continue;
    }
    const renamed = nameKey(g, a.way) !== nameKey(g, b.way);
    const mod = modifierOf(angle);
    const inCls = className(g.wayCls[a.way]!),
      outCls = className(g.wayCls[b.way]!);
    let input: InstructionInput | undefined;
    if (!renamed && Math.abs(angle) < 20)
      input = undefined; // straight on along the same road
    else if (mod === 'uturn') input = { type: 'turn', modifier: 'uturn', name: nameOf(b.way) };
    else if (inCls.endsWith('_link') && (outCls === 'motorway' || outCls === 'trunk') && opts.merging) {
      input = { type: 'merge', modifier: angle < 0 ? 'slight left' : 'slight right', name: nameOf(b.way) };
    } else if (opts.others.length === 1 && Math.abs(angle) < 45 && Math.abs(opts.others[0]!.angle) < 45) {
      input = {
        type: 'fork',
        modifier: angle < opts.others[0]!.angle ? 'slight left' : 'slight right',
        name: nameOf(b.way),
      };
    } else if (Math.abs(angle) >= 45 && (opts.others.length > 0 || renamed)) {
      // a real turn: either there was another way to go, or the road bends onto a new street
      if (renamed || opts.others.some((o) => Math.abs(o.angle) < Math.abs(angle)))
        input = { type: 'turn', modifier: mod, name: nameOf(b.way) };
    } else if (renamed && nameOf(b.way)) {
      input = { type: 'continue', modifier: mod, name: nameOf(b.way) };
    }
    if (input) steps.push({ at: i + 1, way: b.way, input });
  }
  // Cumulative distance/time at each piece boundary, rounded once so the per-step differences sum exactly.
  const cumD = [0],
    cumT = [0];
  for (const pc of pcs) {
    cumD.push(cumD[cumD.length - 1]! + pc.distM);
    cumT.push(cumT[cumT.length - 1]! + pc.ms / 1000);
  }
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const out: Maneuver[] = steps.map((s, k) => {
    const end = k + 1 < steps.length ? steps[k + 1]!.at : pcs.length;
    const loc = pcs[Math.min(s.at, pcs.length - 1)]!.from;
    return {
      type: s.input.type,
      ...(s.input.modifier && s.input.type !== 'depart' ? { modifier: s.input.modifier } : {}),
      ...(s.input.type === 'roundabout' ? { exit: s.input.exit } : {}),
      instruction: instruction(s.input, locale),
      distance_m: r1(r1(cumD[end]!) - r1(cumD[s.at]!)),
      duration_s: r1(r1(cumT[end]!) - r1(cumT[s.at]!)),
      street_name: s.input.name,
      location: loc,
    };
  });
  out.push({
    type: 'arrive',
    instruction: instruction({ type: 'arrive', name: '' }, locale),
    distance_m: 0,
    duration_s: 0,
    street_name: nameOf(pcs[pcs.length - 1]!.way),
    location: pcs[pcs.length - 1]!.to,
  });
  return out;
}

/** The name to show: `name:ar` (Arabic) or `name:en` (English) when mapped, else `name`, else `ref`. */
export function streetName(g: RoadGraph, way: number, locale: Locale): string {
  const [name, ar, en, ref] = g.meta.names[g.wayName[way]!] ?? ['', '', '', ''];
  return (locale === 'ar' ? ar : en) || name || ref || '';
}

const nameKey = (g: RoadGraph, way: number) => (g.meta.names[g.wayName[way]!] ?? []).join('|');

/** Initial bearing of a piece, degrees clockwise from north. */
export function bearing(p: Piece): number {
  const toRad = Math.PI / 180;
  const [lng1, lat1] = p.from,
    [lng2, lat2] = p.to;
  const y = Math.sin((lng2 - lng1) * toRad) * Math.cos(lat2 * toRad);
  const x =
    Math.cos(lat1 * toRad) * Math.sin(lat2 * toRad) -
    Math.sin(lat1 * toRad) * Math.cos(lat2 * toRad) * Math.cos((lng2 - lng1) * toRad);
  return (Math.atan2(y, x) / toRad + 360) % 360;
}

const turnAngle = (inB: number, outB: number) => ((outB - inB + 540) % 360) - 180;

/**
 * The other drivable choices at the junction ending piece `a` (excluding the taken one and going back), with
 * their turn angles; `merging` says whether another road also flows into the junction (a real merge).
 */
function options(g: RoadGraph, v: number, a: Piece, b: Piece) {
  const others: Array<{ way: number; angle: number }> = [];
  if (v < 0) return { others, merging: false };
  const inB = bearing(a);
  for (let e = g.first[v]!; e < g.first[v + 1]!; e++) {
    const h = g.head[e]!;
    const to: [number, number] = [g.lon[h]!, g.lat[h]!];
    if ((to[0] === a.from[0] && to[1] === a.from[1]) || (to[0] === b.to[0] && to[1] === b.to[1])) continue;
    others.push({ way: g.way[e]!, angle: turnAngle(inB, bearing({ ...b, from: b.from, to })) });
  }
  // A merge needs the target road to exist before the junction too, i.e. the junction has a way in besides ours.
  const merging = g.wayCls[a.way] !== g.wayCls[b.way];
  return { others, merging };
}
