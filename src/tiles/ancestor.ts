import { createCanvas, loadImage } from '@napi-rs/canvas';
import { encodeCanvas } from '../render/tile-renderer.js';
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
    const img = await loadImage(stored.data);
    const size = 256 * scale;
    const span = img.width / 2 ** up; // source pixels covering the wanted tile
    const sx = (x - (ax << up)) * span;
    const sy = (y - (ay << up)) * (img.height / 2 ** up);
    const canvas = createCanvas(size, size);
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(img, sx, sy, span, img.height / 2 ** up, 0, 0, size, size);
    return { bytes: await encodeCanvas(canvas, format), z: az };
  }
  return undefined;
}
