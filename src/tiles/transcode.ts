import { createCanvas, loadImage } from '@napi-rs/canvas';
import { sniffImageType } from '../core/image-type.js';
import { encodeCanvas } from '../render/tile-renderer.js';
import type { TileFormat } from './types.js';

const WANT: Record<TileFormat, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', gif: 'image/png' };

/**
 * Converts stored bytes to the requested format. GIF requests get PNG bytes (the route sends the sniffed type);
 * bytes already in the wanted format pass through untouched.
 */
export async function transcode(bytes: Buffer, format: TileFormat): Promise<Buffer> {
  const have = sniffImageType(bytes);
  if (have === WANT[format] || (format === 'gif' && have === 'image/gif')) return bytes;
  const img = await loadImage(bytes);
  const canvas = createCanvas(img.width, img.height);
  const ctx = canvas.getContext('2d');
  if (format === 'jpg') {
    ctx.fillStyle = '#ffffff'; // JPEG has no alpha
    ctx.fillRect(0, 0, img.width, img.height);
  }
  ctx.drawImage(img, 0, 0);
  return encodeCanvas(canvas, format);
}
