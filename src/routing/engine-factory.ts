import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RoutingConfig } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import { GRAPH_FILE, loadGraph, loadGraphShared } from './graph.js';
import { noGraphEngine } from './no-graph.js';
import { PooledRouter, type PooledRouterOptions } from './threads/route-pool.js';
import type { RoutingEngine } from './types.js';
import { graphhopperEngine } from './upstream/graphhopper.js';
import { osrmEngine } from './upstream/osrm.js';
import { valhallaEngine } from './upstream/valhalla.js';

/** Test hooks only: never read from config. */
export interface RoutingTestHooks {
  /** Every built-in query keeps its routing thread busy this long first (a stand-in for a slow route). */
  testDelayMs?: number;
  /** A route computed on the HTTP thread gives up after this long (see route-inline.ts). */
  testInlineBudgetMs?: number;
  /** loadRoutingEngine awaits this before it reads the graph: holds a server in its "routing loading" state. */
  beforeLoad?: () => Promise<void>;
  /** The start-up warm-up's time bound instead of its default (PooledRouter.warmUp). */
  warmUpMaxMs?: number;
}

/**
 * The routing engine named by config: the built-in router over `<data>/roads.graph` (the no-graph engine, which
 * answers the degraded line, until an extract is imported or when the file cannot be read), or an upstream
 * OSRM / Valhalla / GraphHopper server. The built-in router's graph is loaded once into a SharedArrayBuffer and
 * queried from `routing.threads` routing threads (started by the directions service, see route-pool.ts).
 * Synchronous: the graph is read on the calling thread; the server loads it with loadRoutingEngine instead.
 */
export function createRoutingEngine(
  cfg: RoutingConfig,
  dataDir: string,
  log: Logger,
  hooks: RoutingTestHooks = {},
): RoutingEngine {
  if (cfg.engine !== 'builtin') {
    if (!cfg.upstream_url) throw new Error(`routing.engine = ${cfg.engine} needs routing.upstream_url`);
    const make = { osrm: osrmEngine, valhalla: valhallaEngine, graphhopper: graphhopperEngine }[cfg.engine];
    return make(cfg.upstream_url, cfg.timeout_ms);
  }
  const file = join(dataDir, GRAPH_FILE);
  if (!existsSync(file)) return noGraphEngine;
  try {
    const t0 = performance.now();
    const e = new PooledRouter(loadGraph(file, { shared: true }), routerOptions(cfg, hooks));
    log.info('road graph loaded', {
      nodes: e.meta.nodes,
      edges: e.meta.edges,
      threads: e.threads,
      ms: Math.round(performance.now() - t0),
    });
    return e;
  } catch (err) {
    log.error('road graph unreadable; directions answer the degraded line until it is re-imported', {
      error: (err as Error).message,
    });
    return noGraphEngine;
  }
}

/** How a background load of the built-in router's graph ended (see /readyz). */
type GraphLoadState = 'ready' | 'no_graph' | 'unavailable';

export interface GraphLoad {
  engine: RoutingEngine;
  state: GraphLoadState;
}

/**
 * The built-in router over `<data>/roads.graph`, loaded without blocking the event loop: the server listens first and
 * calls this in the background (start-up, reload). The file is read into one SharedArrayBuffer by libuv's thread pool
 * (graph-file.ts); with `start`, the routing threads are started too and the promise resolves once one of them has
 * set its search state up, so the engine answers at once when it is swapped in. Without `start` the threads are left
 * to whoever takes the engine (reload: the running engine adopts the new graph into its threads). An absent file
 * gives the no-graph engine; an unreadable one too, logged, as createRoutingEngine does. One log line with the ms.
 */
export async function loadRoutingEngine(
  cfg: RoutingConfig,
  dataDir: string,
  log: Logger,
  opts: { start?: boolean; hooks?: RoutingTestHooks } = {},
): Promise<GraphLoad> {
  const hooks = opts.hooks ?? {};
  await hooks.beforeLoad?.();
  const file = join(dataDir, GRAPH_FILE);
  if (!existsSync(file)) return { engine: noGraphEngine, state: 'no_graph' };
  const t0 = performance.now();
  let e: PooledRouter;
  try {
    e = new PooledRouter(await loadGraphShared(file), routerOptions(cfg, hooks));
  } catch (err) {
    log.error('road graph unreadable; directions answer the degraded line until it is re-imported', {
      error: (err as Error).message,
    });
    return { engine: noGraphEngine, state: 'unavailable' };
  }
  const readMs = Math.round(performance.now() - t0);
  const started = opts.start ? await e.whenReady() : undefined;
  if (started === false) log.warn('no routing thread set its engine up; routes may fail until one does');
  log.info('road graph loaded', {
    nodes: e.meta.nodes,
    edges: e.meta.edges,
    threads: e.threads,
    read_ms: readMs,
    ms: Math.round(performance.now() - t0),
  });
  return { engine: e, state: 'ready' };
}

const routerOptions = (cfg: RoutingConfig, hooks: RoutingTestHooks): PooledRouterOptions => ({
  snapMaxMeters: cfg.snap_max_m,
  threads: cfg.threads,
  queue: cfg.queue,
  timeoutMs: cfg.timeout_ms,
  testDelayMs: hooks.testDelayMs,
  testInlineBudgetMs: hooks.testInlineBudgetMs,
  help: cfg.share_paths,
  inlineMaxKm: cfg.inline_max_km,
});
