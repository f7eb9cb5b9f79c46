import { LRUCache } from 'lru-cache';

/**
 * An LRU cache of at most `max` entries that allocates as it fills. Given `max`, lru-cache allocates its index
 * arrays for all of them up front: the request path's caches (rate-limit windows, API-key lookups), sized for
 * 20,000-100,000 callers, took ~50 ms of `svcmaps serve`'s start, before /livez could answer, for callers most
 * servers never see. Counting every entry as size 1 against `maxSize` bounds it the same way.
 */
export function growingLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  max: number,
  opts: { ttl?: number } = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...opts, maxSize: max, sizeCalculation: () => 1 });
}
