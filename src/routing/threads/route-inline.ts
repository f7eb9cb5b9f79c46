import { haversineMeters, type LatLng } from '../../core/geo.js';
import { BuiltinEngine } from '../builtin-engine.js';
import type { RoadGraph } from '../road-graph.js';
import type { EngineResult, RouteOptions } from '../types.js';

/**
 * Short routes answered on the calling (HTTP) thread. Handing a query to a routing thread and its answer back costs
 * two thread wake-ups, a structured clone each way and a decode: ~0.35 ms at 600 copies, as much as a 5 km route's
 * own search. When the HTTP thread has nothing else to do (the caller says so: RouteOptions.inline), a route whose
 * ends are at most `maxKm` apart runs here instead. Its cost hardly grows with distance below ~80 km (the hierarchy
 * lifts every search to the same few levels): p50 0.4-0.5 ms, p99 1-3 ms at 600 copies. A search that runs past
 * `budgetMs` gives up and the query goes to the routing threads, so the event loop is never held longer than that
 * (and the few steps after the search: unpacking and writing a short path).
 */
export class InlineRouter {
  private engine: BuiltinEngine | undefined;
  /** Answers given here, and queries that gave up over budget and went on to the routing threads. */
  readonly counts = { answered: 0, handedOn: 0 };

  constructor(
    private readonly snapMaxMeters: number,
    private readonly maxKm: number,
    private readonly budgetMs: number,
  ) {}

  /** Whether a query between these ends may run here (the caller also has to be free). */
  fits(from: LatLng, to: LatLng): boolean {
    return haversineMeters(from, to) <= this.maxKm * 1000;
  }

  /** The answer, or undefined when the search ran over budget (nothing is kept of it). */
  route(graph: RoadGraph, from: LatLng, to: LatLng, opts: RouteOptions): EngineResult | undefined {
    if (this.engine?.graph !== graph) this.engine = new BuiltinEngine(graph, { snapMaxMeters: this.snapMaxMeters });
    const until = performance.now() + this.budgetMs;
    const overBudget = () => {
      if (performance.now() > until) throw OVER_BUDGET;
    };
    let r: EngineResult;
    try {
      r = this.engine.routeSync(from, to, opts, overBudget);
    } catch (e) {
      if (e !== OVER_BUDGET) throw e;
      this.counts.handedOn++;
      return undefined;
    }
    this.counts.answered++;
    return r;
  }
}

const OVER_BUDGET = new Error('inline route over budget');
