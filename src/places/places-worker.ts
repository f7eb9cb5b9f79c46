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
}

serveTasks<{ index: PlacesIndex; init: PlacesInit }>(
  (data, previous) => {
    const init = data as PlacesInit;
    const index = new PlacesIndex(init.file).warm(); // scoring columns in memory before the thread says ready
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
