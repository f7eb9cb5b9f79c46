import type { RoutingEngine } from './types.js';

/** Routing before any road graph is imported: every request is a generic failure, answered as the degraded line. */
export const noGraphEngine: RoutingEngine = {
  name: 'svc',
  async route() {
    throw new Error('no road graph is loaded; import an OSM extract with `svcmaps import`');
  },
};
