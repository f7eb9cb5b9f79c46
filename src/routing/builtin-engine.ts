import type { LatLng } from '../core/geo.js';
import { MAX_STRETCH, viaAlternatives } from './query/alternatives.js';
import { CHQuery } from './query/ch-query.js';
import { loadGraph } from './graph.js';
import type { RoadGraph } from './road-graph.js';
import { maneuvers } from './answer/maneuvers.js';
import type { Overview } from './answer/overview.js';
import { chainsOf, route, seedsOf, sourceSeeds, targetSeeds, type FoundRoute } from './query/chains.js';
import { assemble, directPath, type RoutePath } from './query/path.js';
import type { HandedOver, HelpDesk } from './threads/route-help.js';
import { pathRecord } from './answer/route-record.js';
import { snapPoint } from './query/snap.js';
import type { EnginePath, EngineResult, RouteOptions, RoutingEngine } from './types.js';

export interface BuiltinOptions {
  /** A point farther than this from any drivable road cannot be routed (unroutable, 422). */
  snapMaxMeters: number;
}

/**
 * The built-in car router over the imported graph: snap both ends onto the nearest drivable segment, run a
 * bidirectional contraction-hierarchy query between the segment ends (turn restrictions are in the graph),
 * unpack shortcuts to road geometry, add via-node alternatives and OSRM-style maneuvers. Queries are synchronous
 * (well under a millisecond on a city graph, up to a second across a country), so one pair of search objects
 * serves every request of its thread; the server runs one engine per routing thread (route-pool.ts), all over the
 * same shared graph.
 */
export class BuiltinEngine implements RoutingEngine {
  readonly local = true;
  readonly name = 'svc';
  private readonly q: CHQuery;
  private readonly check: CHQuery;

  constructor(
    readonly graph: RoadGraph,
    private readonly opts: BuiltinOptions,
  ) {
    const core = graph.meta.stats.chCoreNodes ?? 0;
    this.q = new CHQuery(graph, core);
    this.check = new CHQuery(graph, core, false); // T-tests (alternatives.ts)
  }

  static load(file: string, opts: BuiltinOptions): BuiltinEngine {
    return new BuiltinEngine(loadGraph(file), opts);
  }

  /** Identifies the loaded graph, so cached routes from an older import are not served. */
  get version(): string {
    return this.graph.meta.buildId;
  }

  async route(from: LatLng, to: LatLng, opts: RouteOptions): Promise<EngineResult> {
    return this.routeSync(from, to, opts);
  }

  /**
   * `check` is called while the searches run and may throw to abandon the query (see CHQuery.interrupt). The paths
   * carry the full line unless `overview` says otherwise (the directions service always says).
   */
  routeSync(
    from: LatLng,
    to: LatLng,
    opts: { alternatives: number; locale: 'en' | 'ar'; overview?: Overview; maneuvers?: boolean },
    check?: () => void,
    help?: Pick<HelpDesk, 'handOver'>,
  ): EngineResult {
    this.q.interrupt = this.check.interrupt = check;
    const overview = opts.overview ?? 'full',
      locale = opts.locale;
    const withManeuvers = opts.maneuvers ?? true;
    const label = (i: number) => (i === 0 ? 'Fastest' : `Alternative ${i}`);
    // Written by another routing thread (route-help.ts): the primary (assembled there too) while the alternatives
    // are searched for, then the first alternative, handed over as soon as it is found (queued behind the primary,
    // so the helper goes from one to the other without a wake-up) while this thread searches on and writes the last.
    const handed: Array<HandedOver | undefined> = [];
    const lend = help && withManeuvers ? help : undefined;
    const paths = this.search(
      from,
      to,
      opts.alternatives,
      lend && opts.alternatives > 0 ? (f) => !!(handed[0] = lend.handOver(f, label(0), overview, locale)) : undefined,
      lend && opts.alternatives > 1
        ? (p, n) => void (n === 1 && (handed[1] = lend.handOver(p, label(1), overview, locale)))
        : undefined,
    );
    if (!paths) return { kind: 'unroutable' };
    const out = paths.map((p, i): EnginePath | undefined =>
      handed[i]
        ? undefined
        : pathRecord(this.graph, p!, label(i), overview, withManeuvers ? maneuvers(this.graph, p!, locale) : undefined),
    );
    // the last handed over first: one the helper has not started yet is taken back and written here
    for (let i = out.length - 1; i >= 0; i--) out[i] ??= handed[i]!.take(check);
    return { kind: 'ok', paths: out as EnginePath[] };
  }

  /** The primary path and up to `alternatives` alternatives, or undefined when no route exists. */
  paths(from: LatLng, to: LatLng, alternatives: number): RoutePath[] | undefined {
    return this.search(from, to, alternatives) as RoutePath[] | undefined;
  }

  /**
   * paths(), where `lend` may take the primary as the search found it, before it is assembled (answering true):
   * it is then undefined in the list, and the alternatives are searched for meanwhile; `onAlternative` sees each
   * alternative (the nth) as soon as it is accepted.
   */
  private search(
    from: LatLng,
    to: LatLng,
    alternatives: number,
    lend?: (f: FoundRoute) => boolean,
    onAlternative?: (p: RoutePath, n: number) => void,
  ): Array<RoutePath | undefined> | undefined {
    const g = this.graph;
    const a = snapPoint(g, from.lat, from.lng, this.opts.snapMaxMeters);
    const b = snapPoint(g, to.lat, to.lng, this.opts.snapMaxMeters);
    if (!a || !b) return undefined;
    // along the origin's own segment, or its own chain, without passing a junction
    const { seeds: S, direct: onChain } = sourceSeeds(g, a, b);
    const direct =
      directPath(g, a, b) ?? (onChain && assemble(g, a, b, onChain.end, Uint32Array.from(onChain.roads), onChain.last));
    const T = targetSeeds(g, b);
    const r = this.q.run(seedsOf(S), seedsOf(T), alternatives > 0 ? MAX_STRETCH : 0);
    if (!r) return direct ? [direct] : undefined;
    const ends = { g, from: a, to: b, S, T };
    const seeds = [0, 0];
    const turns = this.q.unpack(r.meet, seeds);
    const found: FoundRoute = { ends, sNode: seeds[0]!, turns, tNode: seeds[1]! };
    const chains = chainsOf(g, found.turns);
    const assembled = () => route(ends, found.sNode, found.turns, found.tNode, chains);
    let primary: RoutePath | undefined;
    if (direct) {
      primary = assembled();
      if (direct.ms <= primary.ms) return [direct];
    } else if (!lend?.(found)) primary = assembled();
    const alts =
      alternatives > 0
        ? viaAlternatives(ends, this.q, this.check, { edges: chains }, r.meet, r.cost, alternatives, onAlternative)
        : [];
    return [primary, ...alts];
  }
}
