import { bearingOf } from './bearings.js';
import { isJunction } from '../query/chains.js';
import type { RoadGraph } from '../road-graph.js';
import { instruction, modifierOf, type InstructionInput, type Locale } from './instructions.js';
import {
  chainEnd,
  chainStart,
  codeInput,
  junctionAngles,
  junctionInput,
  LOOK,
  streetName,
  type Side,
} from './junction.js';
import type { RoutePath } from '../query/path.js';
import type { Maneuver } from '../types.js';

/**
 * Turn-by-turn maneuvers in OSRM's model, derived from the route's pieces and the junctions they pass:
 * depart, turn (with modifier), continue (name change going on), roundabout (with exit number), merge (link onto
 * a motorway/trunk), fork (two near-straight choices), arrive. A maneuver covers the road from its point to the
 * next maneuver; distances and durations come from rounded cumulative sums, so they add up to the route's
 * totals exactly (to the rounding unit).
 */
export function maneuvers(g: RoadGraph, p: RoutePath, locale: Locale): Maneuver[] {
  const n = p.n,
    pts = p.pts;
  const nameOf = (w: number) => streetName(g, w, locale);
  const say = p.say,
    shift = locale === 'ar' ? 8 : 0;
  const steps: Array<{ at: number; input: InstructionInput }> = [];
  const start = startOf(g, p, 0);
  steps.push({
    at: 0,
    input: { type: 'depart', bearing: bearingOf(pts[0]!, pts[1]!, start.x, start.y), name: nameOf(start.way) },
  });
  let exits = 0;
  let roundaboutStep: (typeof steps)[number] | undefined;
  const node = p.node,
    chain = p.chain,
    wayRoundabout = g.wayRoundabout;
  for (let i = 0; i + 1 < n; i++) {
    const v = node[i]!;
    // Fast paths. The end of a piece of one road edge inside a chain (road-graph.ts), a shape point inside one way with
    // no other way out, has nothing to announce: one bit, in an array small enough to stay in cache (a chain
    // piece ends at a junction). A turn onto a chain says what it says whatever the route (path.ts RoutePath.say):
    // most junctions of a long route are passed, or announced, without reading either chain. (The first piece may
    // end partway along the turn's road edge, so the route says what its first junction says.)
    if (chain[i]! < 0 && v >= 0 && !isJunction(g, v)) continue;
    const code = i > 0 ? (say[i + 1]! >>> shift) & 0xff : LOOK;
    if (code === 0) continue;
    if (code !== LOOK) {
      steps.push({ at: i + 1, input: codeInput(code, nameOf(g.cWay[chain[i + 1]!]!)) });
      continue;
    }
    // the road edges that meet at the junction: the one in, from (a.x, a.y), and the one out, to (b.x, b.y)
    const a = endOf(g, p, i),
      b = startOf(g, p, i + 1),
      bWay = b.way;
    const jx = pts[2 * i + 2]!,
      jy = pts[2 * i + 3]!;
    const rbIn = wayRoundabout[a.way] === 1,
      rbOut = wayRoundabout[bWay] === 1;
    if (rbIn || rbOut) {
      const { angle, others } = junctionAngles(g, v, a, b, jx, jy);
      if (!rbIn && rbOut) {
        exits = 0;
        roundaboutStep = { at: i + 1, input: { type: 'roundabout', exit: 1, name: '' } };
        steps.push(roundaboutStep);
      } else if (rbIn) {
        if (others().some((o) => !g.wayRoundabout[o.way])) exits++;
        if (!rbOut) {
          if (roundaboutStep) {
            roundaboutStep.input.exit = Math.max(1, exits + 1);
            roundaboutStep.input.name = nameOf(bWay);
          } else {
            // the route started inside the roundabout: just say where to leave it
            steps.push({ at: i + 1, input: { type: 'turn', modifier: modifierOf(angle), name: nameOf(bWay) } });
          }
          roundaboutStep = undefined;
        }
      }
      continue;
    }
    const input = junctionInput(g, v, a, b, jx, jy, nameOf);
    if (input) steps.push({ at: i + 1, input });
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
    sumT += time[i]!;
  }
  cumD[ns] = sumD;
  cumT[ns] = sumT;
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const point = (k: number): [number, number] => [pts[2 * k]!, pts[2 * k + 1]!];
  const out: Maneuver[] = [];
  for (let k = 0; k < ns; k++) {
    const s = steps[k]!,
      input = s.input;
    // fields in this order (maneuver-json.ts writes them so), the optional ones undefined when they do not apply,
    // which JSON leaves out: every maneuver one shape
    out.push({
      type: input.type,
      modifier: input.type !== 'depart' ? input.modifier : undefined,
      exit: input.type === 'roundabout' ? input.exit : undefined,
      instruction: instruction(input, locale),
      distance_m: r1(r1(cumD[k + 1]!) - r1(cumD[k]!)),
      duration_s: r1(r1(cumT[k + 1]! / 1000) - r1(cumT[k]! / 1000)),
      street_name: input.name,
      location: point(Math.min(s.at, n - 1)),
    });
  }
  out.push({
    type: 'arrive',
    modifier: undefined,
    exit: undefined,
    instruction: instruction({ type: 'arrive', name: '' }, locale),
    distance_m: 0,
    duration_s: 0,
    street_name: nameOf(endOf(g, p, n - 1).way),
    location: point(n),
  });
  return out;
}

/** The road edge piece i ends on, and where that edge comes from. */
function endOf(g: RoadGraph, p: RoutePath, i: number): Side {
  const from = i > 0 ? p.node[i - 1]! : p.behind,
    x = p.pts[2 * i]!,
    y = p.pts[2 * i + 1]!;
  return p.chain[i]! < 0 ? { way: p.way[i]!, node: from, x, y } : chainEnd(g, p.chain[i]!, from, x, y);
}

/** The road edge piece i starts on, and where that edge leads. */
function startOf(g: RoadGraph, p: RoutePath, i: number): Side {
  const c = p.chain[i]!;
  if (c >= 0) return chainStart(g, c);
  const node = p.node[i]! >= 0 ? p.node[i]! : p.toward;
  return { way: p.way[i]!, node, x: p.pts[2 * i + 2]!, y: p.pts[2 * i + 3]! };
}
