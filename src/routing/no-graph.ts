import type { RoutingEngine } from './types.js';

/** What the no-graph engine throws: expected while no graph is loaded, so not worth a warning per request. */
export const NO_ROAD_GRAPH = 'NoRoadGraph';

/**
 * Routing before any road graph is imported (or while it loads): every request is a generic failure, answered as the
 * degraded line. /readyz and the start-up log say why; the per-request log line is at debug level.
 */
export const noGraphEngine: RoutingEngine = {
  name: 'svc',
  async route() {
    throw Object.assign(new Error('no road graph is loaded; import an OSM extract with `svcmaps import`'), {
      name: NO_ROAD_GRAPH,
    });
  },
};
