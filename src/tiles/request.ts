import { AppError } from '../core/errors.js';
import { MAX_ZOOM, type TileFormat, type TileRequest } from './types.js';

const Y_RE = /^(\d{1,7})(?:@([23])x)?(?:\.([a-z]{1,5}))?$/;
const INT_RE = /^\d{1,7}$/;
const FORMATS: Record<string, TileFormat> = { png: 'png', jpg: 'jpg', jpeg: 'jpg', gif: 'gif', webp: 'webp' };

/** z/x/y[@2x|@3x][.ext]; anything malformed or outside the 2^z grid is a (bare) 400. */
export function parseTilePath(z: string, x: string, yPart: string, prefetch: boolean): TileRequest {
  const m = Y_RE.exec(yPart);
  if (!INT_RE.test(z) || !INT_RE.test(x) || !m) throw new AppError('VALIDATION_ERROR', 'bad tile address');
  const zi = Number(z);
  const xi = Number(x);
  const yi = Number(m[1]);
  const format = m[3] === undefined ? 'png' : FORMATS[m[3]];
  if (zi > MAX_ZOOM || !format) throw new AppError('VALIDATION_ERROR', 'bad zoom or format');
  const n = 2 ** zi;
  if (xi >= n || yi >= n) throw new AppError('VALIDATION_ERROR', 'tile outside the grid');
  return { z: zi, x: xi, y: yi, scale: m[2] ? (Number(m[2]) as 2 | 3) : 1, format, prefetch };
}
