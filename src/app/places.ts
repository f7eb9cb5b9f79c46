import { join } from 'node:path';
import type { Config } from '../config/defaults.js';
import type { Logger } from '../core/log.js';
import type { AnswerCache } from '../cache/answer-cache.js';
import { Pool } from '../limits/pool.js';
import { emptyPlaces } from '../places/empty.js';
import { LocalPlaces } from '../places/engine.js';
import { openPlacesIndex } from '../places/load.js';
import { PhotoSource } from '../places/photos.js';
import { PlacesThreads } from '../places/places-threads.js';
import type { PlacesService } from '../places/types.js';
import { PLACES_FILE } from '../store/places/schema.js';
import type { ReloadHooks } from '../ops/reload.js';
import type { Services } from '../services.js';

export interface Places {
  /** The engine at start-up; a reload swaps services.places, never this. */
  service: PlacesService;
  photos: PhotoSource;
  pools: Services['pools'];
  /** Whoever holds the places threads now: a reload may start them. */
  readonly threads: PlacesThreads | undefined;
  /** For /readyz. */
  ready(): boolean;
  /**
   * The places threads' start: settles once none is still opening places.db (all up, or failed and queries run
   * here), or after a minute, or on close(); polled, as /readyz reads it.
   */
  whenUp(closing: AbortSignal): Promise<void>;
  /** Registers the `places` reload hook, which swaps services.places; nothing when the engine was injected. */
  registerReload(reloads: ReloadHooks, services: Pick<Services, 'places'>): void;
  close(): void;
}

/** Search, reverse geocoding and place details: the places index, its threads, photos and the request pools. */
export function startPlaces(
  config: Config,
  root: string,
  answers: AnswerCache,
  log: Logger,
  injected: PlacesService | undefined,
): Places {
  const photos = new PhotoSource(join(root, 'photos'), config.public_url, undefined, log);
  // The places index is opened when the data directory has one (`serve` makes sure of that); otherwise empty answers.
  let placesIndex = injected ? undefined : openPlacesIndex(root);
  // Searches and reverse lookups run in places threads, each with its own read-only connection to places.db.
  const placesFile = join(root, PLACES_FILE);
  const placesThreads = (): PlacesThreads =>
    new PlacesThreads({
      file: placesFile,
      threads: config.places.threads,
      queue: config.places.queue,
      timeoutMs: config.http.request_timeout_ms,
    });
  let threads = placesIndex ? placesThreads() : undefined;
  const p = config.pools;
  const pools = {
    autocomplete: new Pool(
      'autocomplete',
      p.autocomplete.concurrency,
      p.autocomplete.queue,
      'AUTOCOMPLETE_BACKPRESSURE',
      log,
    ),
    geocode: new Pool('geocode', p.geocode.concurrency, p.geocode.queue, 'GEOCODE_BACKPRESSURE', log),
    reverse: new Pool('reverse', p.reverse.concurrency, p.reverse.queue, 'REVERSE_BACKPRESSURE', log),
    place: new Pool('place', p.place.concurrency, p.place.queue, 'PLACE_BACKPRESSURE', log),
  };
  // Places threads open places.db in the background; queries sent meanwhile wait for them (not ready for /readyz).
  let placesReady = !threads;

  return {
    service: injected ?? (placesIndex ? new LocalPlaces(placesIndex, answers, photos, threads) : emptyPlaces),
    photos,
    pools,
    get threads() {
      return threads;
    },
    ready() {
      placesReady ||= threads?.warm ?? true; // once up, reopen (reload) keeps the threads answering
      return placesReady;
    },
    async whenUp(closing) {
      for (const until = Date.now() + 60_000; !closing.aborted && threads?.starting && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 20));
    },
    registerReload(reloads, services) {
      if (injected) return;
      // A new import swaps in a new places engine; answers cached under the old index generation are never served.
      reloads.register('places', async () => {
        const next = openPlacesIndex(root);
        if (!next) return 'no places index in the data directory; keeping the current engine';
        const old = placesIndex;
        if (threads)
          await threads.reopen(placesFile); // every places thread swaps in the new file
        else threads = placesThreads();
        services.places = new LocalPlaces(next, answers, photos, threads);
        placesIndex = next;
        if (old) reloads.retire(() => old.close());
        return `${next.count.toLocaleString('en-US')} places (generation ${next.generation})`;
      });
    },
    close() {
      placesIndex?.close();
      threads?.close();
    },
  };
}
