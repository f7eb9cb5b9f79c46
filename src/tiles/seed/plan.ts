import type { SeedArea } from './area.js';

export interface TileAddress {
  z: number;
  x: number;
  y: number;
}

/** `0-16` or a list `12,14` (or a mix, `0-5,12`); zooms 0..20. */
export function parseZooms(s: string): number[] {
  const out = new Set<number>();
  for (const part of s.split(',').map((p) => p.trim())) {
    const m = /^(\d{1,2})(?:-(\d{1,2}))?$/.exec(part);
    if (!m) throw new Error(`--zoom: expected a range like 0-16 or a list like 12,14, got "${s}"`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a > b || b > 20) throw new Error(`--zoom: ${part} is not within 0-20`);
    for (let z = a; z <= b; z++) out.add(z);
  }
  return [...out].sort((x, y) => x - y);
}

/**
 * Depth-first walk of the tile pyramid over the area: a parent comes before its children, and a subtree whose
 * root misses the area is skipped whole. Depth-first keeps neighbouring tiles together (warm renderer caches, R*Tree
 * pages) and makes `--resume` cheap: everything before the interruption point is a quick "already stored" check.
 */
export function* walk(area: SeedArea, zooms: number[]): Generator<TileAddress> {
  const wanted = new Set(zooms);
  const maxZ = zooms[zooms.length - 1]!;
  function* visit(z: number, x: number, y: number): Generator<TileAddress> {
    if (!area.touches(z, x, y)) return;
    if (wanted.has(z)) yield { z, x, y };
    if (z === maxZ) return;
    for (const [dx, dy] of [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ] as const)
      yield* visit(z + 1, x * 2 + dx, y * 2 + dy);
  }
  yield* visit(0, 0, 0);
}

export function countByZoom(area: SeedArea, zooms: number[]): Map<number, number> {
  const counts = new Map<number, number>(zooms.map((z) => [z, 0]));
  for (const t of walk(area, zooms)) counts.set(t.z, counts.get(t.z)! + 1);
  return counts;
}
