import type { AppOverrides } from '../app.js';
import type { Config } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import type { AnswerCache } from '../cache/answer-cache.js';
import { Pool } from '../limits/pool.js';
import { DirectionsService } from '../routing/directions.js';
import { createRoutingEngine, loadRoutingEngine } from '../routing/engine-factory.js';
import { noGraphEngine } from '../routing/no-graph.js';
import type { RequestMetrics } from '../ops/request-metrics.js';
import type { ReloadHooks } from '../ops/reload.js';
import type { Readiness } from '../services.js';

export interface Routing {
  directions: DirectionsService;
  /** The directions and prefetch pools, for /metrics. */
  pools: Pool[];
  /** For /readyz. */
  state(): Readiness['routing'];
  /**
   * Starts the built-in router's graph load and warm-up, registers the `roads` reload hook, and settles when the load
   * and warm-up have ended, however they ended (at once for an upstream or injected engine).
   */
  load(reloads: ReloadHooks, placesUp: Promise<void>, closing: AbortSignal): Promise<void>;
  close(): void;
}

/** Directions: the routing engine (built-in, upstream or injected) behind the directions service and its pools. */
export function startRouting(
  config: Config,
  root: string,
  answers: AnswerCache,
  requests: RequestMetrics,
  log: Logger,
  o: Pick<AppOverrides, 'routing' | 'routingHooks'>,
): Routing {
  const p = config.pools;
  // Named here (not inline) so /metrics can report their occupancy beside the places pools.
  const routePools = {
    directions: new Pool('directions', p.directions.concurrency, p.directions.queue, 'DIRECTIONS_BACKPRESSURE', log),
    prefetch: new Pool('prefetch', config.prefetch.concurrency, 0, 'DIRECTIONS_BACKPRESSURE', log),
  };
  // The built-in router's graph is loaded in the background (loadRoads below), never on the way to listening: until
  // it is in service the no-graph engine answers (the degraded line). An upstream engine needs no load.
  const builtinRouting = !o.routing && config.routing.engine === 'builtin';
  let routingState: Readiness['routing'] = builtinRouting ? 'loading' : 'ready';
  const directions = new DirectionsService({
    // built-in router over <data>/roads.graph (no-graph engine until it is loaded or imported), or the upstream
    engine: o.routing ?? (builtinRouting ? noGraphEngine : createRoutingEngine(config.routing, root, log)),
    cache: answers,
    pool: routePools.directions,
    prefetchPool: routePools.prefetch,
    prefetchTimeoutMs: config.prefetch.timeout_ms,
    log,
    alone: () => requests.inflight <= 1,
    loadWaitMs: config.routing.timeout_ms,
  });

  const load = (reloads: ReloadHooks, placesUp: Promise<void>, closing: AbortSignal): Promise<void> => {
    // Start-up: the graph is read and the routing threads set up while the server already answers. A route asked
    // meanwhile waits for the engine within its own budget (DirectionsService.whileLoading), so a server that is
    // merely starting answers real routes; the engine is swapped in once a routing thread is ready.
    const engineIn = builtinRouting
      ? loadRoutingEngine(config.routing, root, log, { start: true, hooks: o.routingHooks }).then(
          ({ engine, state }) => {
            if (closing.aborted) {
              engine.close?.();
              return undefined;
            }
            directions.setEngine(engine);
            return { engine, state };
          },
        )
      : undefined;
    if (engineIn) directions.whileLoading(engineIn);
    // Routes are real from the first routing thread; /readyz waits for every one of them, `loaded` also for their
    // warm-up, which starts once the places threads are up too (its CPU would slow their start). The warm-up yields
    // to real queries (PooledRouter.warmUp).
    const loadRoads = async (): Promise<void> => {
      const loadedEngine = await engineIn;
      if (!loadedEngine) return;
      const { engine, state } = loadedEngine;
      await engine.whenWarm?.();
      // Ready once every routing thread is set up: the warm-up that follows yields to real queries (they never wait
      // behind it), so /readyz need not wait for it; `loaded` does.
      routingState = state;
      if (config.routing.warm_routes > 0 && engine.warmUp) {
        await placesUp;
        if (!closing.aborted) {
          const warm = await engine.warmUp(config.routing.warm_routes, o.routingHooks?.warmUpMaxMs);
          log.info('routing warm-up done', { routes: warm.routes, failed: warm.failed, last_error: warm.lastError });
        }
      }
    };
    const roadsLoaded = builtinRouting
      ? loadRoads().catch((e: unknown) => {
          log.error('road graph load failed; directions answer the degraded line', { error: (e as Error).message });
          routingState = 'unavailable';
        })
      : Promise.resolve();
    if (builtinRouting) {
      // Reload reads the new file in the background too; the current graph answers until it is in, then the running
      // threads adopt it. A reload during the start-up load waits for that load first.
      reloads.register('roads', async () => {
        await roadsLoaded;
        const { engine: next, state } = await loadRoutingEngine(config.routing, root, log, {
          start: directions.engine === noGraphEngine, // no threads to adopt the graph: start its own first
          hooks: o.routingHooks,
        });
        if (next === noGraphEngine) {
          return state === 'unavailable'
            ? 'road graph unreadable (see the log); keeping the current engine'
            : 'no road graph in the data directory; keeping the current engine';
        }
        if (closing.aborted) {
          next.close?.();
          return 'server closing';
        }
        directions.setEngine(next);
        routingState = 'ready';
        return `road graph ${next.version ?? ''}`.trim();
      });
    }
    return roadsLoaded;
  };

  return {
    directions,
    pools: [routePools.directions, routePools.prefetch],
    state: () => routingState,
    load,
    close: () => directions.close(),
  };
}
