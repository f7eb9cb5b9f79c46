import { type Canvas, createCanvas, loadImage } from '@napi-rs/canvas';
import type { TileFormat } from '../tiles/types.js';

/** Decodes an image and encodes it again in `format`; JPEG, having no alpha, gets a white background. */
export async function reencodeImage(bytes: Buffer, format: TileFormat): Promise<Buffer> {
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

/**
 * Cuts one cell out of a `2^levels` x `2^levels` grid laid over an image (column `col`, row `row`) and scales it up
 * to `size` x `size` pixels with high-quality smoothing, encoded in `format`.
 */
export async function enlargeGridCell(
  bytes: Buffer,
  levels: number,
  col: number,
  row: number,
  size: number,
  format: TileFormat,
): Promise<Buffer> {
  const img = await loadImage(bytes);
  const span = img.width / 2 ** levels; // source pixels covering the wanted cell
  const spanY = img.height / 2 ** levels;
  const canvas = createCanvas(size, size);
  const ctx = canvas.getContext('2d');
  ctx.imageSmoothingEnabled = true;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(img, col * span, row * spanY, span, spanY, 0, 0, size, size);
  return encodeCanvas(canvas, format);
}

/** Decodes an image to learn its pixel size; rejects with the decoder's message when the bytes are not an image. */
export async function decodedImageSize(bytes: Buffer): Promise<{ width: number; height: number }> {
  const img = await loadImage(bytes);
  return { width: img.width, height: img.height };
}

/** A drawn tile in its format (PNG, or JPEG/WebP at quality 88). */
export async function encodeCanvas(canvas: Canvas, format: TileFormat): Promise<Buffer> {
  if (format === 'jpg') return canvas.encode('jpeg', 88);
  if (format === 'webp') return canvas.encode('webp', 88);
  return canvas.encode('png');
}
