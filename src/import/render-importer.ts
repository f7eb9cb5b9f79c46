import { basename, join } from 'node:path';
import { RENDER_DB } from '../store/render/schema.js';
import { RenderStoreWriter } from '../store/render/writer.js';
import { ringsBox } from '../render/mercator.js';
import { DEFAULT_IMPORT_MEMORY } from './node-index.js';
import { readOsm } from './render/osm-read.js';
import { isPbf, type Importer } from './types.js';

/**
 * OSM PBF -> render.db: the features the built-in tile renderer draws (roads, buildings, land use, water, coastline
 * land, places and POIs with English and Arabic names), with an R*Tree for tile queries.
 */
export const renderImporter: Importer = {
  name: 'render',
  accepts: isPbf,
  async run(file, dataDir, progress, signal, opts = {}) {
    const memory = opts.memoryBytes ?? DEFAULT_IMPORT_MEMORY;
    const started = performance.now();
    const writer = new RenderStoreWriter(join(dataDir, RENDER_DB));
    try {
      const read = await readOsm(
        file,
        (f) => writer.add(f),
        (d, t) => progress('read', d, t),
        signal,
        // the rest of the budget: features in flight, joined lines, SQLite's page cache and the JS heap
        { nodeBudgetBytes: memory * 0.35, wayBudgetBytes: memory * 0.25, spillDir: dataDir, feed: opts.feed },
      );
      await opts.admit?.();
      if (read.coast.length) {
        writer.add({ layer: 'land', cls: 'coast', minzoom: 5, rank: 9, rings: read.coast, box: ringsBox(read.coast) });
      }
      progress('index', 1, 1);
      writer.commit({
        source: basename(file),
        imported_at: new Date().toISOString(),
        box: JSON.stringify(read.box),
        ...(read.coast.length ? { coverage: JSON.stringify(read.box) } : {}),
      });
      return { importer: 'render', counts: { ...writer.counts }, seconds: (performance.now() - started) / 1000 };
    } catch (e) {
      writer.abort();
      throw e;
    }
  },
};
