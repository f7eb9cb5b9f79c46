import { enlargeGridCell } from '../render/tile-image.js';
import type { TileFormat } from './types.js';
import type { Scale, WarmStore } from './warm-store.js';

/** How many zoom levels up a stand-in may come from: beyond 6 (64x magnification) it is a blur, not a map. */
const MAX_LEVELS_UP = 6;

export interface Ancestor {
  bytes: Buffer;
  z: number;
}

/**
 * A degraded stand-in for a tile the origin cannot produce now: the nearest stored ancestor's quadrant, cut and
 * scaled up to the tile's size. Served as `ancestor-z<N>`, never stored, never cached as verified.
 */
export async function ancestorTile(
  warm: WarmStore,
  z: number,
  x: number,
  y: number,
  scale: Scale,
  format: TileFormat,
): Promise<Ancestor | undefined> {
  for (let up = 1; up <= Math.min(z, MAX_LEVELS_UP); up++) {
    const az = z - up;
    const ax = x >> up;
    const ay = y >> up;
    const stored = warm.get(az, ax, ay, scale);
    if (!stored) continue;
    // The wanted tile is one cell of a 2^up x 2^up grid over the ancestor.
    const bytes = await enlargeGridCell(stored.data, up, x - (ax << up), y - (ay << up), 256 * scale, format);
    return { bytes, z: az };
  }
  return undefined;
}
