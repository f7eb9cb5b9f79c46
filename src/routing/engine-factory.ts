import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RoutingConfig } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import { GRAPH_FILE, loadGraph } from './graph.js';
import { noGraphEngine } from './no-graph.js';
import { PooledRouter } from './route-pool.js';
import type { RoutingEngine } from './types.js';
import { graphhopperEngine } from './upstream/graphhopper.js';
import { osrmEngine } from './upstream/osrm.js';
import { valhallaEngine } from './upstream/valhalla.js';

/** Test hooks only: never read from config. */
export interface RoutingTestHooks {
  /** Every built-in query keeps its routing thread busy this long first (a stand-in for a slow route). */
  testDelayMs?: number;
}

/**
 * The routing engine named by config: the built-in router over `<data>/roads.graph` (the no-graph engine, which
 * answers the degraded line, until an extract is imported or when the file cannot be read), or an upstream
 * OSRM / Valhalla / GraphHopper server. The built-in router's graph is loaded once into a SharedArrayBuffer and
 * queried from `routing.threads` routing threads (started by the directions service, see route-pool.ts).
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
    const e = new PooledRouter(loadGraph(file, { shared: true }), {
      snapMaxMeters: cfg.snap_max_m,
      threads: cfg.threads,
      queue: cfg.queue,
      timeoutMs: cfg.timeout_ms,
      testDelayMs: hooks.testDelayMs,
    });
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
