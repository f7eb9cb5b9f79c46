/**
 * A places thread (see places-threads.ts): its own read-only connection to places.db and the in-memory scoring
 * columns (shared with the other places threads), answering one search or reverse lookup at a time.
 */
import { BroadcastChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { LatLng } from '../core/geo.js';
import { processWarnings } from '../core/log.js';
import { serveTasks } from '../limits/worker-host.js';
import { PlacesIndex, type ScoringColumns } from '../store/places/index-db.js';
import { reverse } from './reverse.js';
import { search, type SearchInput } from './search.js';
import type { Locale } from './types.js';

export type PlacesTask = { op: 'search'; input: SearchInput } | { op: 'reverse'; at: LatLng; locale: Locale };

export interface PlacesInit {
  file: string;
  /** Test hook only: each query first keeps the thread busy this long, checking its cancel word. */
  testDelayMs?: number;
  /**
   * [tickets taken, threads done warming, the first has begun posting its columns]: threads warm their columns one
   * after another (see warmInTurn).
   */
  turn?: Int32Array;
  /** BroadcastChannel name on which the first thread to read the columns hands them to the others. */
  channel?: string;
  /** Test hook only: every thread but the first to warm takes this much longer to. */
  testLaterWarmMs?: number;
}

/** The longest a thread waits for the one before it to warm (one that died never says it is done). */
const TURN_WAIT_MS = 30_000;

/** How long a thread waits for the columns after the one before it is done (then it reads its own). */
const HANDOVER_WAIT_MS = 2_000;

/**
 * Loading the scoring columns is seconds of CPU and ~150 MB on a country. The first thread to take a ticket reads
 * them into shared memory and posts them on the pool's channel; the others wait their turn and map the same memory
 * (a thread that misses the message, e.g. one started later to replace a dead one, reads its own copy). Meanwhile
 * the pool answers from the first, and start-up leaves the other cores to the routing graph and the HTTP thread.
 */
function warmInTurn(init: PlacesInit): PlacesIndex {
  const index = new PlacesIndex(init.file);
  const { turn } = init;
  if (!turn) return index.warm();
  // listening before taking a ticket, so the first thread's post cannot come before this thread listens
  const channel = init.channel ? new BroadcastChannel(init.channel) : undefined;
  // The first thread may have posted its columns before this channel existed (it reads them from the columns file in
  // milliseconds, while this thread was still starting): then no message will come, and this thread reads its own
  // at once instead of waiting HANDOVER_WAIT_MS for it. The first sets the flag before it posts.
  const postedBeforeListening = Atomics.load(turn, 2) > 0;
  const ticket = Atomics.add(turn, 0, 1);
  try {
    const until = Date.now() + TURN_WAIT_MS;
    for (let done = Atomics.load(turn, 1); done < ticket && Date.now() < until; done = Atomics.load(turn, 1))
      Atomics.wait(turn, 1, done, until - Date.now());
    if (ticket > 0 && init.testLaterWarmMs) sleep(init.testLaterWarmMs);
    const got = ticket > 0 && channel && !postedBeforeListening ? receiveColumns(channel) : undefined;
    if (!got || !index.useColumns(got)) {
      index.warm();
      if (ticket === 0 && channel) {
        Atomics.store(turn, 2, 1);
        channel.postMessage(index.sharedColumns);
      }
    }
    return index;
  } finally {
    Atomics.add(turn, 1, 1);
    Atomics.notify(turn, 1);
    channel?.close();
  }
}

/** The columns the first thread posted (the message may still be on its way when its turn ends). */
function receiveColumns(channel: BroadcastChannel): ScoringColumns | undefined {
  const until = Date.now() + HANDOVER_WAIT_MS;
  for (;;) {
    // Node takes a BroadcastChannel here as well as a MessagePort (its type declarations name only the latter)
    const m = receiveMessageOnPort(channel as unknown as Parameters<typeof receiveMessageOnPort>[0]);
    if (m) return m.message as ScoringColumns;
    if (Date.now() >= until) return undefined;
    sleep(5);
  }
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

serveTasks<{ index: PlacesIndex; init: PlacesInit }>(
  (data, previous) => {
    const init = data as PlacesInit;
    // scoring columns in memory before the thread says ready, read by one thread and shared (a reload too)
    const index = warmInTurn(init);
    // a thread has no app logger: a process warning reaches the server's stderr
    if (index.columnsNote) processWarnings.warn('places scoring columns', { note: index.columnsNote });
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
