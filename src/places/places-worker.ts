/**
 * A places thread (see places-threads.ts): its own read-only connection to places.db and its own in-memory scoring
 * columns, answering one search or reverse lookup at a time.
 */
import type { LatLng } from '../core/geo.js';
import { serveTasks } from '../limits/worker-host.js';
import { PlacesIndex } from '../store/places/index-db.js';
import { reverse } from './reverse.js';
import { search, type SearchInput } from './search.js';
import type { Locale } from './types.js';

export type PlacesTask = { op: 'search'; input: SearchInput } | { op: 'reverse'; at: LatLng; locale: Locale };

export interface PlacesInit {
  file: string;
  /** Test hook only: each query first keeps the thread busy this long, checking its cancel word. */
  testDelayMs?: number;
  /** [tickets taken, threads done warming]: threads warm their columns one after another (see warmInTurn). */
  turn?: Int32Array;
  /** Test hook only: every thread but the first to warm takes this much longer to. */
  testLaterWarmMs?: number;
}

/** The longest a thread waits for the one before it to warm (one that died never says it is done). */
const TURN_WAIT_MS = 30_000;

/**
 * Loading the scoring columns is seconds of CPU on a country. All threads at once would take every core from the
 * routing graph's load and the HTTP thread at start; in turn, the first is ready as soon as it can be (the pool
 * answers from it while the others load) and start-up leaves a core free.
 */
function warmInTurn(file: string, turn: Int32Array | undefined, laterMs = 0): PlacesIndex {
  if (!turn) return new PlacesIndex(file).warm();
  const ticket = Atomics.add(turn, 0, 1);
  const until = Date.now() + TURN_WAIT_MS;
  for (let done = Atomics.load(turn, 1); done < ticket && Date.now() < until; done = Atomics.load(turn, 1))
    Atomics.wait(turn, 1, done, until - Date.now());
  if (ticket > 0 && laterMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, laterMs);
  try {
    return new PlacesIndex(file).warm();
  } finally {
    Atomics.add(turn, 1, 1);
    Atomics.notify(turn, 1);
  }
}

serveTasks<{ index: PlacesIndex; init: PlacesInit }>(
  (data, previous) => {
    const init = data as PlacesInit;
    // scoring columns in memory before the thread says ready; at start one thread at a time, a reload all at once
    const index = previous ? new PlacesIndex(init.file).warm() : warmInTurn(init.file, init.turn, init.testLaterWarmMs);
    previous?.index.close();
    return { index, init };
  },
  ({ index, init }, payload, check) => {
    const t = payload as PlacesTask;
    if (init.testDelayMs) {
      const until = performance.now() + init.testDelayMs;
      while (performance.now() < until) check();
    }
    check();
    return t.op === 'search' ? search(index, t.input) : reverse(index, t.at, t.locale);
  },
);
