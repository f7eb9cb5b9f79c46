import { AppError } from '../core/errors.js';
import { etagOf } from '../core/etag.js';

/** The 67-byte transparent 1x1 PNG the spec prescribes for sprite images. */
const TRANSPARENT_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAACklEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==',
  'base64',
);

export interface Sprite {
  type: string;
  body: Buffer | string;
  etag: string;
}

// Constant bodies: their ETags are computed once, not per request.
const JSON_SPRITE: Sprite = { type: 'application/json', body: '{}', etag: etagOf('{}') };
const PNG_SPRITE: Sprite = { type: 'image/png', body: TRANSPARENT_PNG, etag: etagOf(TRANSPARENT_PNG) };

/** Sprite stubs: `.json` is an empty sprite index, `.png` the transparent pixel, anything else 404. */
export function sprite(name: string): Sprite {
  if (name.endsWith('.json')) return JSON_SPRITE;
  if (name.endsWith('.png')) return PNG_SPRITE;
  throw new AppError('NOT_FOUND');
}
