import { join } from 'node:path';
import { mbtilesName, type Scale } from '../tiles/warm-store.js';

/** Where a seed or export writes scale `s`: the data directory's warm store, or `<file>` / `<file>@2x.mbtiles`. */
export function seedTarget(dataDir: string, output?: string): (s: Scale) => string {
  if (!output) return (s) => join(dataDir, mbtilesName(s));
  return (s) => (s === 1 ? output : output.replace(/(\.mbtiles)?$/, `@${s}x$1`));
}

export const fmtBytes = (n: number): string =>
  n >= 1e9
    ? `${(n / 1e9).toFixed(2)} GB`
    : n >= 1e6
      ? `${(n / 1e6).toFixed(1)} MB`
      : n >= 1e3
        ? `${(n / 1e3).toFixed(1)} kB`
        : `${Math.round(n)} B`;

/** A per-zoom table with a total row; columns named "size"/"est. size" are bytes, "... s" are seconds. */
export function summaryTable(rows: Array<{ z: number; cols: Record<string, number> }>, footer: string): string {
  if (!rows.length) return `${footer}\n`;
  const names = Object.keys(rows[0]!.cols);
  const cell = (name: string, v: number) =>
    /size/.test(name) ? fmtBytes(v) : / s$/.test(name) ? v.toFixed(2) : String(v);
  const total: Record<string, number> = {};
  for (const r of rows) for (const n of names) total[n] = (total[n] ?? 0) + r.cols[n]!;
  const lines = [
    ['zoom', ...names],
    ...rows.map((r) => [String(r.z), ...names.map((n) => cell(n, r.cols[n]!))]),
    ['total', ...names.map((n) => cell(n, total[n]!))],
  ];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const out = lines.map((l) => l.map((c, i) => c.padStart(widths[i]!)).join('  '));
  return `${out.join('\n')}\n${footer}\n`;
}
