import type { MBTiles } from '../../store/mbtiles.js';

/** What a seed job was asked to do, kept in the MBTiles so `--resume` needs no arguments. */
export interface SeedArgs {
  bbox: string[];
  /** The --polygon file's name, for messages. */
  polygon?: string;
  /**
   * The --polygon file's GeoJSON text: the job carries its area, so `--resume` works without the file and the
   * MBTiles names no path outside the data directory (which may be copied to another machine).
   */
  polygon_geojson?: string;
  zoom: string;
  scale: string;
  origin?: string;
  concurrency: number;
  refreshBefore?: string;
}

export function startJob(m: MBTiles, args: SeedArgs): number {
  return m.startSeedJob(JSON.stringify(args));
}

export function finishJob(m: MBTiles, id: number): void {
  m.finishSeedJob(id);
}

/** The most recent job that never finished (killed, interrupted, or failed tiles), if any. */
export function unfinishedJob(m: MBTiles): { id: number; args: SeedArgs; startedAt: number } | undefined {
  const r = m.unfinishedSeedJob();
  return r ? { ...r, args: JSON.parse(r.args) as SeedArgs } : undefined;
}

/**
 * Rough PNG bytes per tile at scale 1 when nothing is stored yet at that zoom, measured on the built-in style over
 * a city with OSM data (open sea or Natural-Earth-only land compresses to a few kB, so estimates err high there).
 */
const DEFAULT_BYTES = (z: number): number => (z <= 4 ? 40_000 : z <= 10 ? 14_000 : z <= 11 ? 28_000 : 40_000);
const SCALE_FACTOR: Record<number, number> = { 1: 1, 2: 2.8, 3: 5.5 };

/** Average stored size per zoom when the file has tiles there, else the default: for `--dry-run` estimates. */
export function bytesPerTile(m: MBTiles | undefined, z: number, scale: number): number {
  return m?.averageTileBytes(z) ?? DEFAULT_BYTES(z) * SCALE_FACTOR[scale]!;
}

/** After a seed: minzoom/maxzoom from what is stored, bounds grown to include the seeded area. */
export function updateExtent(m: MBTiles, area: [number, number, number, number]): void {
  const r = m.zoomRange();
  if (!r) return;
  const meta = m.metadata();
  const old = (meta.bounds ?? '').split(',').map(Number);
  const world = old.length !== 4 || old[0]! <= -179.9;
  const b = world
    ? area
    : [Math.min(old[0]!, area[0]), Math.min(old[1]!, area[1]), Math.max(old[2]!, area[2]), Math.max(old[3]!, area[3])];
  const fmt = (n: number) => n.toFixed(6).replace(/\.?0+$/, '');
  m.setMetadata({
    minzoom: r.lo,
    maxzoom: r.hi,
    bounds: b.map(fmt).join(','),
    center: `${fmt((b[0]! + b[2]!) / 2)},${fmt((b[1]! + b[3]!) / 2)},${Math.min(r.hi, Math.max(r.lo, 12))}`,
  });
}
