import { existsSync } from 'node:fs';
import { MBTiles } from '../../store/mbtiles.js';
import type { Scale } from '../warm-store.js';
import { OriginError, type TileOrigin } from './types.js';

/**
 * Another MBTiles file as origin (e.g. one exported from elsewhere). High-DPI requests use a sibling file named
 * `<name>@2x.mbtiles` / `<name>@3x.mbtiles` when present, otherwise the base file's tiles are served as they are:
 * the client scales them, the server never upscales.
 */
export class MbtilesOrigin implements TileOrigin {
  readonly name = 'mbtiles';
  private readonly files = new Map<Scale, MBTiles>();

  constructor(private readonly path: string) {
    if (!existsSync(path)) throw new Error(`tiles.mbtiles_path: no such file ${path}`);
  }

  private file(scale: Scale): MBTiles {
    let f = this.files.get(scale);
    if (!f) {
      const sibling = this.path.replace(/(\.mbtiles)?$/, `@${scale}x$1`);
      f =
        scale > 1 && existsSync(sibling)
          ? new MBTiles(sibling, { readonly: true })
          : scale > 1
            ? this.file(1)
            : new MBTiles(this.path, { readonly: true });
      this.files.set(scale, f);
    }
    return f;
  }

  async fetch(z: number, x: number, y: number, scale: Scale): Promise<Buffer | undefined> {
    try {
      return this.file(scale).get(z, x, y)?.data;
    } catch (e) {
      throw new OriginError('failed', `${this.path}: ${(e as Error).message}`);
    }
  }

  close(): void {
    for (const f of new Set(this.files.values())) f.close();
  }
}
