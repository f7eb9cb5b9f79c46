import type { Lane } from '../limits/admission.js';

export type TileFormat = 'png' | 'jpg' | 'gif' | 'webp';

export interface TileRequest {
  z: number;
  x: number;
  y: number;
  scale: 1 | 2 | 3;
  format: TileFormat;
  /** Speculative client traffic (X-Svc-Prefetch): never answered with a degraded stand-in. */
  prefetch: boolean;
  /** Render priority of a cold tile: interactive unless prefetch; static maps ask for their tiles as batch. */
  lane?: Lane;
  /** The requester's signal (client gone, request timed out): a render it alone waits for is dropped unstarted. */
  signal?: AbortSignal;
  /** The caller looked in the hot tier already (hot() answered nothing): tile() does not look, or count, again. */
  hotChecked?: boolean;
}

export interface TileAnswer {
  bytes: Buffer;
  /** X-Tile-Source: cache, memory, fresh, fresh-prefetch, or ancestor-* for a degraded stand-in. */
  source: string;
  /**
   * Strong ETag of `bytes` (quoted, the same value src/http/etag.ts derives), computed once per stored or cached tile
   * so a route can skip hashing the body on every hit.
   */
  etag?: string;
}

/** Where tiles come from. `undefined` means the origin has no such tile (404), not an error. */
export interface TileService {
  tile(r: TileRequest): Promise<TileAnswer | undefined>;
  /** Whether tile() would answer from memory at once (the hot tier holds it). */
  isHot?(r: Pick<TileRequest, 'z' | 'x' | 'y' | 'scale' | 'format'>): boolean;
  /** tile()'s answer when the hot tier holds it, without a promise; undefined when it does not. */
  hot?(r: Pick<TileRequest, 'z' | 'x' | 'y' | 'scale' | 'format'>): TileAnswer | undefined;
}

export const MAX_ZOOM = 20;
