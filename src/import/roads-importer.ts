import { basename, join } from 'node:path';
import { GRAPH_FILE, saveGraph } from '../routing/graph.js';
import { DEFAULT_IMPORT_MEMORY } from './node-index.js';
import { buildRoadGraph } from './roads/build-graph.js';
import { readOsmRoads } from './roads/osm-read.js';
import { isPbf, type Importer } from './types.js';

/**
 * `roads`: the car routing graph. Consumes one read of the PBF (node positions into an index, then the ways),
 * builds the graph with turn restrictions and its contraction hierarchy, and writes `<data>/roads.graph` atomically.
 */
export const roadsImporter: Importer = {
  name: 'roads',
  accepts: isPbf,
  async run(file, dataDir, progress, signal, opts = {}) {
    const t0 = performance.now();
    // Read alone: an eighth of the budget for node positions, the rest spilled: the ones drivable ways use (a fifth)
    // are read back once, in id order, so the spill file is written and read front to back. With half the budget
    // resident, as places keeps, the 1,200-copy country's import peaked 0.5 GB higher (the graph is built right after
    // the read).
    const nodeBudgetBytes = (opts.memoryBytes ?? DEFAULT_IMPORT_MEMORY) * 0.125;
    const osm = await readOsmRoads(file, {
      ferries: false,
      progress,
      signal,
      nodeBudgetBytes,
      spillDir: dataDir,
      feed: opts.feed,
    });
    if (!osm.wayCls.length) throw new Error(`${file} holds no drivable roads`);
    await opts.admit?.();
    // The graph names its source file, not its path: a data directory is carried to other machines as it is.
    const g = buildRoadGraph(osm, basename(file), (stage, done = 0, total = 1) => progress(stage, done, total));
    if (signal.aborted) throw new Error('aborted');
    saveGraph(join(dataDir, GRAPH_FILE), g);
    // Via-way relations that cannot be applied, by reason: members that are not one from way, via ways, one to way
    // (malformed), consecutive members that do not meet (disconnected), or meet at too many places (ambiguous).
    // Those naming a way that is no drivable road here, or a sequence that cannot be driven, have nothing to apply:
    // they are counted on their own (via_way_restrictions_not_drivable), not as skipped.
    const st = g.meta.stats;
    const reasons = {
      malformed: osm.skipped.viaWayRestrictions,
      disconnected: st.viaWayDisconnected ?? 0,
      ambiguous: st.viaWayAmbiguous ?? 0,
    };
    const skipped = reasons.malformed + reasons.disconnected + reasons.ambiguous;
    return {
      importer: 'roads',
      counts: {
        ways: osm.wayCls.length,
        nodes: g.meta.nodes,
        edges: g.meta.edges,
        junctions: g.jNode.length,
        chains: g.cHead.length,
        turns: g.tHead.length,
        shortcuts: g.chHead.length - g.tHead.length,
        restrictions: st.restrictions ?? 0,
        via_way_restrictions: st.viaWayRestrictions ?? 0,
        via_way_restrictions_skipped: skipped,
        ...Object.fromEntries(
          Object.entries(reasons)
            .filter(([, v]) => v > 0)
            .map(([k, v]) => [`via_way_restrictions_skipped_${k}`, v]),
        ),
        ...(st.viaWayNotDrivable ? { via_way_restrictions_not_drivable: st.viaWayNotDrivable } : {}),
      },
      seconds: (performance.now() - t0) / 1000,
    };
  },
};
