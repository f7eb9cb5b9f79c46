import type { Scale } from '../warm-store.js';

/** Why an origin could not produce a tile: `timeout` becomes 504, `failed` 502 (both Retry-After 1) without a stand-in. */
export class OriginError extends Error {
  override name = 'OriginError';
  constructor(
    readonly kind: 'timeout' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where fresh tiles come from. Resolves to image bytes (any raster format; the serving path converts), or
 * `undefined` when the origin has no such tile (404). Throws OriginError when it cannot answer now.
 */
export interface TileOrigin {
  readonly name: string;
  fetch(z: number, x: number, y: number, scale: Scale, signal: AbortSignal): Promise<Buffer | undefined>;
  close?(): void;
}
