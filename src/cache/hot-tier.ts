import { LRUCache } from 'lru-cache';

/** What a hot-tier entry holds: tiles (keys `t:...`, tiles/tiered.ts) or JSON answers (everything else). */
type HotKind = 'tiles' | 'answers';

interface HotKindStats {
  /** Lookups answered from memory since the server started. */
  hits: number;
  /** Lookups that found nothing (the caller then went to SQLite or the origin). */
  misses: number;
  /** hits / (hits + misses), null before the first lookup. */
  hit_rate: number | null;
  entries: number;
  bytes: number;
}

export interface HotTierStats {
  capacity_bytes: number;
  bytes: number;
  entries: number;
  tiles: HotKindStats;
  answers: HotKindStats;
}

const HEALTH_KEY = '\0health';
/**
 * Answers over this size (a cross-country route is ~1 MB) share LARGE_SHARE of the capacity among themselves: a
 * few hundred of them would otherwise push every hot tile and small answer out of memory, and hold the
 * server's memory a quarter of a gigabyte above its working set.
 */
export const LARGE_ANSWER_BYTES = 64 * 1024;
const LARGE_SHARE = 1 / 8;
const kindOf = (key: string): HotKind => (key.startsWith('t:') ? 'tiles' : 'answers');
const sizeOf = (v: Buffer, k: string) => v.byteLength + k.length + 64;

/**
 * The in-process hot tier (the spec's fast cache tier, `source` = `memory`): byte-weighted so its memory use is
 * bounded by configuration whatever mix of small JSON answers and large tiles it holds. Every lookup goes through
 * get(), which counts hits and misses per kind; entries and bytes per kind follow inserts and disposals. Large
 * answers live in an LRU of their own within the same capacity (LARGE_SHARE).
 */
export class HotTier {
  private readonly lru: LRUCache<string, Buffer>;
  private readonly large: LRUCache<string, Buffer>;
  private readonly counts = {
    tiles: { hits: 0, misses: 0, entries: 0, bytes: 0 },
    answers: { hits: 0, misses: 0, entries: 0, bytes: 0 },
  };

  constructor(private readonly maxBytes: number) {
    const largeBytes = Math.max(1, Math.floor(maxBytes * LARGE_SHARE));
    this.lru = this.tier(Math.max(1, maxBytes - largeBytes));
    this.large = this.tier(largeBytes);
  }

  private tier(maxSize: number): LRUCache<string, Buffer> {
    return new LRUCache<string, Buffer>({
      maxSize,
      sizeCalculation: sizeOf,
      // 'update' re-sets the same buffer: nothing changes. 'add' and 'replace' (after the old value's dispose) count.
      onInsert: (v, k, how) => {
        if (how === 'update' || k === HEALTH_KEY) return;
        const c = this.counts[kindOf(k)];
        c.entries++;
        c.bytes += sizeOf(v, k);
      },
      // Evicted, deleted or replaced.
      dispose: (v, k) => {
        if (k === HEALTH_KEY) return;
        const c = this.counts[kindOf(k)];
        c.entries--;
        c.bytes -= sizeOf(v, k);
      },
    });
  }

  get(key: string): Buffer | undefined {
    const v = this.lru.get(key) ?? this.large.get(key);
    const c = this.counts[kindOf(key)];
    if (v) c.hits++;
    else c.misses++;
    return v;
  }

  /** Whether the tier holds the key, without counting a lookup or refreshing its place. */
  has(key: string): boolean {
    return this.lru.has(key) || this.large.has(key);
  }

  set(key: string, value: Buffer): void {
    const large = value.byteLength > LARGE_ANSWER_BYTES && kindOf(key) === 'answers';
    // a key lives in one of the two; a new value may move it
    (large ? this.lru : this.large).delete(key);
    (large ? this.large : this.lru).set(key, value);
  }

  get bytes(): number {
    return this.lru.calculatedSize + this.large.calculatedSize;
  }

  /** Hit rates since start and what the tier holds now, per kind (the admin status route). */
  stats(): HotTierStats {
    const of = (k: HotKind): HotKindStats => {
      const { hits, misses, entries, bytes } = this.counts[k];
      return { hits, misses, hit_rate: hits + misses ? hits / (hits + misses) : null, entries, bytes };
    };
    return {
      capacity_bytes: this.maxBytes,
      bytes: this.bytes,
      entries: this.lru.size + this.large.size,
      tiles: of('tiles'),
      answers: of('answers'),
    };
  }

  /** Health probe: a write and read-back round trip; 'ok' or what failed. Not counted as a lookup. */
  check(): string {
    try {
      this.lru.set(HEALTH_KEY, Buffer.from('ok'));
      const ok = this.lru.get(HEALTH_KEY)?.toString() === 'ok';
      this.lru.delete(HEALTH_KEY);
      return ok ? 'ok' : 'hot tier read-back mismatch';
    } catch (e) {
      return (e as Error).message;
    }
  }
}
