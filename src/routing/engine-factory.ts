import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RoutingConfig } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import { BuiltinEngine } from './builtin-engine.js';
import { GRAPH_FILE } from './graph.js';
import { noGraphEngine } from './no-graph.js';
import type { RoutingEngine } from './types.js';
import { graphhopperEngine } from './upstream/graphhopper.js';
import { osrmEngine } from './upstream/osrm.js';
import { valhallaEngine } from './upstream/valhalla.js';

/**
 * The routing engine named by config: the built-in router over `<data>/roads.graph` (the no-graph engine, which
 * answers the degraded line, until an extract is imported or when the file cannot be read), or an upstream
 * OSRM / Valhalla / GraphHopper server.
 */
export function createRoutingEngine(cfg: RoutingConfig, dataDir: string, log: Logger): RoutingEngine {
  if (cfg.engine !== 'builtin') {
    if (!cfg.upstream_url) throw new Error(`routing.engine = ${cfg.engine} needs routing.upstream_url`);
    const make = { osrm: osrmEngine, valhalla: valhallaEngine, graphhopper: graphhopperEngine }[cfg.engine];
    return make(cfg.upstream_url, cfg.timeout_ms);
  }
  const file = join(dataDir, GRAPH_FILE);
  if (!existsSync(file)) return noGraphEngine;
  try {
    const t0 = performance.now();
    const e = BuiltinEngine.load(file, { snapMaxMeters: cfg.snap_max_m });
    log.info('road graph loaded', {
      nodes: e.graph.meta.nodes,
      edges: e.graph.meta.edges,
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
