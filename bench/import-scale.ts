/**
 * Import at country scale: builds (or reuses) a synthetic country with ../shared/tools/synth-country.mjs (needs
 * Debian osmium-tool; see bench/synth.ts), then imports it one stage at a time, each in its own process so its peak RSS
 * (getrusage maxRSS) is that stage's alone, and prints one table.
 *
 *   npx tsx bench/import-scale.ts [--copies 100] [--memory 4g] [--stages render,roads,places] [--pbf FILE]
 *
 * The country goes to $TMPDIR/svcmaps-bench-import/country-N.osm.pbf and is reused; data directories are temporary.
 * Numbers from a shared machine move with its load: the table prints the load average beside them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMPORTERS } from '../src/import/importers.js';
import { parseSize } from '../src/import/node-index.js';
import { importStage, syntheticCountry } from './synth.js';

const args = process.argv.slice(2);
const opt = (k: string, d: string) => {
  const i = args.indexOf(k);
  return i >= 0 && args[i + 1] ? args[i + 1]! : d;
};

if (args[0] === '--child') {
  // One stage: --child <stage> <file> <data dir> <memory bytes>
  const [, stage, file, dir, memory] = args;
  const imp = IMPORTERS.find((i) => i.name === stage);
  if (!imp || !file || !dir) throw new Error('usage: --child <stage> <file> <dir> <bytes>');
  const t0 = performance.now();
  const s = await imp.run(file, dir, () => {}, new AbortController().signal, { memoryBytes: Number(memory) });
  process.stdout.write(
    JSON.stringify({
      seconds: (performance.now() - t0) / 1000,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      counts: s.counts,
    }) + '\n',
  );
} else {
  const copies = Number(opt('--copies', '100'));
  const memory = parseSize(opt('--memory', '4g'));
  const stages = opt('--stages', 'render,roads,places').split(',');
  const pbf = opt('--pbf', '') || syntheticCountry(copies);
  const rows: string[] = [];
  for (const stage of stages) {
    const data = mkdtempSync(join(tmpdir(), `svcmaps-bench-${stage}-`));
    const load = loadavg()[0]!.toFixed(1);
    const out = importStage(stage, pbf, data, memory);
    rmSync(data, { recursive: true, force: true });
    if (!out) {
      rows.push(`| ${stage} | failed | | ${load} |`);
      continue;
    }
    rows.push(`| ${stage} | ${out.seconds.toFixed(1)} s | ${(out.peakRssMb / 1024).toFixed(2)} GB | ${load} |`);
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
  process.stdout.write(
    `\n${pbf}, --memory ${opt('--memory', '4g')}, ${availableParallelism()} cores\n\n` +
      `| stage | wall time | peak RSS | load avg at start |\n|---|---|---|---|\n${rows.join('\n')}\n`,
  );
}
