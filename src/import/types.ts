import type { OsmFeed } from './osm-feed.js';

/** Progress of one importer: bytes of the input file consumed so far (the only measure every format shares). */
export interface ImportProgress {
  (stage: string, done: number, total: number): void;
}

export interface ImportSummary {
  importer: string;
  /** Counts worth telling the operator, e.g. { places: 1234, streets: 56 }. */
  counts: Record<string, number>;
  seconds: number;
}

/** How an import may use the machine. */
interface ImportOptions {
  /**
   * Memory budget of the import in bytes (`svcmaps import --memory`): the node index and other id-keyed stores
   * take their shares of it and spill to files in the data directory past them. Default DEFAULT_IMPORT_MEMORY.
   */
  memoryBytes?: number;
  /**
   * A read of the PBF shared with other importers (parallel.ts); without it, a PBF importer reads the file itself.
   */
  feed?: OsmFeed;
  /** Awaited between the read and the build phase, where memory peaks (parallel.ts admits build phases). */
  admit?: () => Promise<void>;
}

/**
 * One consumer of an imported file (places index, road graph, render store). Each consumes a read of the file (its
 * own, or one shared with the others: ImportOptions.feed) and builds into a temporary file that it renames over the
 * live one only when complete, so a crash or Ctrl-C never leaves a half-built index in service and a re-run simply
 * replaces the previous import.
 */
export interface Importer {
  readonly name: string;
  accepts(file: string): boolean;
  run(
    file: string,
    dataDir: string,
    progress: ImportProgress,
    signal: AbortSignal,
    opts?: ImportOptions,
  ): Promise<ImportSummary>;
}

export const isPbf = (file: string): boolean => /\.osm\.pbf$|\.pbf$/i.test(file);
export const isGeojsonl = (file: string): boolean => /\.(geojsonl|geojsons|ndjson|jsonl)(\.gz)?$/i.test(file);
