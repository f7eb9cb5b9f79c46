import { sniffImageType } from '../core/image-type.js';
import { reencodeImage } from '../render/tile-image.js';
import type { TileFormat } from './types.js';

const WANT: Record<TileFormat, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', gif: 'image/png' };

/**
 * Converts stored bytes to the requested format. GIF requests get PNG bytes (the route sends the sniffed type);
 * bytes already in the wanted format pass through untouched.
 */
export async function transcode(bytes: Buffer, format: TileFormat): Promise<Buffer> {
  const have = sniffImageType(bytes);
  if (have === WANT[format] || (format === 'gif' && have === 'image/gif')) return bytes;
  return reencodeImage(bytes, format);
}
