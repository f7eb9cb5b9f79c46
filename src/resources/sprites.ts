import { AppError } from '../core/errors.js';

/** The 67-byte transparent 1x1 PNG the spec prescribes for sprite images. */
export const TRANSPARENT_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAACklEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==',
  'base64',
);

/** Sprite stubs: `.json` is an empty sprite index, `.png` the transparent pixel, anything else 404. */
export function sprite(name: string): { type: string; body: Buffer | string } {
  if (name.endsWith('.json')) return { type: 'application/json', body: '{}' };
  if (name.endsWith('.png')) return { type: 'image/png', body: TRANSPARENT_PNG };
  throw new AppError('NOT_FOUND');
}
