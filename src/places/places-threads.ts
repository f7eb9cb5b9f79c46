import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { ErrorCode } from '../core/errors.js';
import type { LatLng } from '../core/geo.js';
import { WorkerPool } from '../limits/worker-pool.js';
import type { PlacesInit, PlacesTask } from './places-worker.js';
import type { ReverseHit } from './reverse.js';
import type { SearchInput } from './search.js';
import type { Locale, Prediction } from './types.js';

export interface PlacesThreadsOptions {
  /** places.db to open in every thread (read-only, one connection each). */
  file: string;
  /** Threads; 0 = os.availableParallelism(). */
  threads: number;
  /** Queries that may wait for a thread; one more is refused with the capability's *_BACKPRESSURE code. */
  queue: number;
  /** A query unanswered this long is abandoned (its thread replaced if it does not stop). */
  timeoutMs: number;
  /** Test hook only (never set from config): each query first keeps its thread busy this long (abandonable). */
  testDelayMs?: number;
  /** Test hook only: every thread but the first to load its columns takes this much longer to. */
  testLaterWarmMs?: number;
}

export interface PlacesQueryOptions {
  signal?: AbortSignal;
  shedCode: ErrorCode;
}

/**
 * Places queries (autocomplete and geocode searches, reverse lookups) off the event loop: a pool of threads, each
 * with its own read-only SQLite connection to places.db (limits/worker-pool.ts: bounded queue, deadlines, abort).
 * Threads open the index in the background; queries sent meanwhile wait for them (`starting`). Callers query
 * in-process only when no thread could open it.
 * `reopen` swaps a new places.db into every thread (reload after an import).
 */
export class PlacesThreads {
  private readonly pool: WorkerPool;

  constructor(private readonly o: PlacesThreadsOptions) {
    this.pool = new WorkerPool({
      name: 'places',
      here: import.meta.url,
      module: 'places-worker',
      size: o.threads > 0 ? o.threads : availableParallelism(),
      queue: o.queue,
      shedCode: 'AUTOCOMPLETE_BACKPRESSURE',
      timeoutMs: o.timeoutMs,
      init: this.init(o.file),
      // a SQLite statement cannot be interrupted: give a long query time to finish before its thread is replaced
      stuckMs: 5000,
    });
  }

  get ready(): boolean {
    return this.pool.ready;
  }

  /**
   * Every thread has its columns loaded. Until then the ones still loading take a core from the others (seconds of
   * CPU each on a country), so /readyz waits for this, not for the first thread.
   */
  get warm(): boolean {
    return this.pool.ready && !this.pool.starting;
  }

  /** A thread is still opening the index (seconds on a country): queries sent now wait for it. */
  get starting(): boolean {
    return this.pool.starting;
  }

  get stats() {
    return this.pool.stats;
  }

  search(input: SearchInput, o: PlacesQueryOptions): Promise<Prediction[]> {
    return this.pool.run<Prediction[]>({ op: 'search', input } satisfies PlacesTask, o);
  }

  reverse(at: LatLng, locale: Locale, o: PlacesQueryOptions): Promise<ReverseHit> {
    return this.pool.run<ReverseHit>({ op: 'reverse', at, locale } satisfies PlacesTask, o);
  }

  /** Every thread opens `file` (and closes its old connection) before its next query. */
  reopen(file: string): Promise<void> {
    return this.pool.update(this.init(file));
  }

  /** What the threads set up from: a fresh turn and channel each time, so one thread reads the columns for all. */
  private init(file: string): PlacesInit {
    return {
      file,
      testDelayMs: this.o.testDelayMs,
      turn: new Int32Array(new SharedArrayBuffer(12)),
      channel: `svcmaps-places-${randomUUID()}`,
      testLaterWarmMs: this.o.testLaterWarmMs,
    };
  }

  close(): void {
    this.pool.close();
  }
}
