import { join } from 'node:path';
import { MBTiles, type StoredTile, type TileWrite } from '../store/mbtiles.js';
import { ATTRIBUTION } from '../resources/styles.js';

export type Scale = 1 | 2 | 3;

/** `tiles.mbtiles` for 256 px tiles, `tiles@2x.mbtiles` / `tiles@3x.mbtiles` for 512 / 768 px: each a standalone MBTiles. */
export const mbtilesName = (scale: Scale): string => (scale === 1 ? 'tiles.mbtiles' : `tiles@${scale}x.mbtiles`);

export function defaultMetadata(scale: Scale, format = 'png'): Record<string, string | number> {
  return {
    name: `svcmaps basemap${scale === 1 ? '' : ` @${scale}x`}`,
    format,
    type: 'baselayer',
    version: '1.3',
    description: `Raster basemap, ${256 * scale} px tiles`,
    attribution: ATTRIBUTION,
    bounds: '-180,-85.051129,180,85.051129',
    center: '0,0,2',
    minzoom: 0,
    maxzoom: 20,
    'svc:tile_size': 256 * scale,
  };
}

/** Fills the metadata of a new file; an existing file keeps what it has (a seeder may have set bounds). */
export function openMbtiles(file: string, scale: Scale): MBTiles {
  const m = new MBTiles(file);
  if (!m.metadata().format) m.setMetadata(defaultMetadata(scale));
  return m;
}

/**
 * The warm tier: one MBTiles per scale in the data directory, opened on first use. Writes from the serving path
 * are queued and flushed in one transaction per tick (or per 256 tiles) so a burst of fresh tiles costs one commit;
 * reads look at the queue first so a tile is never "lost" between production and commit.
 */
export class WarmStore {
  private readonly files = new Map<Scale, MBTiles>();
  private readonly queue = new Map<string, TileWrite & { scale: Scale; at: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly dir: string,
    private readonly flushMs = 50,
    private readonly onError: (e: Error) => void = () => {},
  ) {}

  file(scale: Scale): MBTiles {
    let f = this.files.get(scale);
    if (!f) {
      f = openMbtiles(join(this.dir, mbtilesName(scale)), scale);
      this.files.set(scale, f);
    }
    return f;
  }

  get(z: number, x: number, y: number, scale: Scale): StoredTile | undefined {
    const q = this.queue.get(`${z}/${x}/${y}@${scale}`);
    if (q) return { data: q.data, hash: '', updatedAt: q.at };
    return this.file(scale).get(z, x, y);
  }

  put(z: number, x: number, y: number, scale: Scale, data: Buffer): void {
    this.queue.set(`${z}/${x}/${y}@${scale}`, { z, x, y, scale, data, at: Date.now() });
    if (this.queue.size >= 256) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushMs);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const byScale = new Map<Scale, TileWrite[]>();
    for (const w of this.queue.values()) byScale.set(w.scale, [...(byScale.get(w.scale) ?? []), w]);
    this.queue.clear();
    for (const [scale, rows] of byScale) {
      try {
        this.file(scale).putMany(rows);
      } catch (e) {
        // Storing back is an optimisation: a locked or full disk must not fail the request that produced the tile.
        this.onError(e as Error);
      }
    }
  }

  close(): void {
    this.flush();
    for (const f of this.files.values()) f.close();
    this.files.clear();
  }
}
