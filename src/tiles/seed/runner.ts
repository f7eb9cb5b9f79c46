import type { MBTiles, TileWrite } from '../../store/mbtiles.js';
import type { TileOrigin } from '../origins/types.js';
import type { Scale } from '../warm-store.js';
import type { SeedArea } from './area.js';
import { walk, type TileAddress } from './plan.js';

export interface SeedOptions {
  area: SeedArea;
  zooms: number[];
  scales: Scale[];
  concurrency: number;
  /** Unix ms: stored tiles written before this are produced again; without it stored tiles are kept. */
  refreshBefore?: number;
  origin: TileOrigin;
  /** The MBTiles file a scale is written to (opened read-write by the caller). */
  file(scale: Scale): MBTiles;
  total: number;
  progress?(done: number, total: number, z: number): void;
  signal: AbortSignal;
}

interface ZoomStats {
  z: number;
  written: number;
  skipped: number;
  missing: number;
  failed: number;
  bytes: number;
  /** Origin time summed over this zoom's tiles (tiles of several zooms overlap in time). */
  originSeconds: number;
}

export interface SeedResult {
  zooms: ZoomStats[];
  seconds: number;
  interrupted: boolean;
  failed: Array<TileAddress & { scale: Scale; error: string }>;
}

const BATCH_TILES = 200;
const BATCH_MS = 1000;

/**
 * Seeds the pyramid: `concurrency` producers pull tile addresses from the depth-first walk; one writer commits
 * their output in batched transactions (WAL), so a kill -9 loses at most the last uncommitted batch and `--resume`
 * only has to skip what is already stored.
 */
export async function runSeed(o: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const stats = new Map<number, ZoomStats>(
    o.zooms.map((z) => [z, { z, written: 0, skipped: 0, missing: 0, failed: 0, bytes: 0, originSeconds: 0 }]),
  );
  const failed: SeedResult['failed'] = [];
  const batch = new Map<Scale, TileWrite[]>();
  let batched = 0;
  let lastFlush = performance.now();
  let done = 0;

  const flush = () => {
    for (const [scale, rows] of batch) o.file(scale).putMany(rows);
    batch.clear();
    batched = 0;
    lastFlush = performance.now();
  };

  function* work(): Generator<TileAddress & { scale: Scale }> {
    for (const t of walk(o.area, o.zooms)) for (const scale of o.scales) yield { ...t, scale };
  }
  const queue = work();

  const producer = async () => {
    for (;;) {
      if (o.signal.aborted) return;
      const next = queue.next();
      if (next.done) return;
      const t = next.value;
      const st = stats.get(t.z)!;
      const at = o.file(t.scale).updatedAt(t.z, t.x, t.y);
      if (at !== undefined && (o.refreshBefore === undefined || at >= o.refreshBefore)) {
        st.skipped++;
      } else {
        const t0 = performance.now();
        try {
          const bytes = await o.origin.fetch(t.z, t.x, t.y, t.scale, o.signal);
          st.originSeconds += (performance.now() - t0) / 1000;
          if (!bytes) st.missing++;
          else {
            const rows = batch.get(t.scale) ?? [];
            rows.push({ z: t.z, x: t.x, y: t.y, data: bytes });
            batch.set(t.scale, rows);
            batched++;
            st.written++;
            st.bytes += bytes.length;
          }
        } catch (e) {
          if (o.signal.aborted) return;
          st.failed++;
          failed.push({ ...t, error: (e as Error).message });
        }
      }
      done++;
      if (batched >= BATCH_TILES || (batched && performance.now() - lastFlush > BATCH_MS)) flush();
      o.progress?.(done, o.total, t.z);
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency) }, producer));
  } finally {
    flush(); // whatever was produced before an interruption is kept
  }
  return {
    zooms: [...stats.values()],
    seconds: (performance.now() - started) / 1000,
    interrupted: o.signal.aborted,
    failed,
  };
}
