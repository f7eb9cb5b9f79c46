import { LRUCache } from 'lru-cache';

/**
 * The in-process hot tier (the spec's fast cache tier, `source` = `memory`): byte-weighted so its memory use is
 * bounded by configuration whatever mix of small JSON answers and large tiles it holds.
 */
export class HotTier {
  private readonly lru: LRUCache<string, Buffer>;

  constructor(maxBytes: number) {
    this.lru = new LRUCache<string, Buffer>({
      maxSize: maxBytes,
      sizeCalculation: (v, k) => v.byteLength + k.length + 64,
    });
  }

  get(key: string): Buffer | undefined {
    return this.lru.get(key);
  }

  set(key: string, value: Buffer): void {
    this.lru.set(key, value);
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }

  /** Health probe: a write and read-back round trip; 'ok' or what failed. */
  check(): string {
    const k = '\0health';
    try {
      this.lru.set(k, Buffer.from('ok'));
      const ok = this.lru.get(k)?.toString() === 'ok';
      this.lru.delete(k);
      return ok ? 'ok' : 'hot tier read-back mismatch';
    } catch (e) {
      return (e as Error).message;
    }
  }
}
