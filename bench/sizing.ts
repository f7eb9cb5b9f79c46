/**
 * Sizing: what an operator needs for a city, a small country and an Egypt-size country. For each extract, one whole
 * `svcmaps import` as an operator runs it (the built CLI, default `--memory`), into a fresh data directory: wall time
 * and peak RSS (the process's VmHWM, sampled until it exits); then the data directory's size on disk; then
 * `svcmaps serve` on it: RSS once /readyz answers. Results: a table on stdout and bench/latest/sizing.json, which
 * docs/benchmarks.md shows and the README's sizing table quotes.
 *
 *   npm run bench:sizing
 *
 * Extracts: the Monaco extract in test/fixtures/osm/ (a city), and synthetic countries of 100 and 600 copies of the
 * Liechtenstein extract (bench/synth.ts: ../shared/tools/synth-country.mjs and Debian osmium-tool, built once and
 * reused). BENCH_SIZING=monaco,100,600 picks which (default all three); BENCH_SIZING_PBF_<name>=<file> uses a PBF
 * already built.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { recordResult } from './record.js';
import { syntheticCountry } from './synth.js';
import { ROOT, statusMb } from './tiles-proc.js';

const CLI = join(ROOT, 'bin/svcmaps');

const EXTRACTS: Record<string, { label: string; pbf: () => string }> = {
  monaco: { label: 'a city: Monaco', pbf: () => join(ROOT, 'test/fixtures/osm/monaco.osm.pbf') },
  '100': { label: 'a small country: 100 copies', pbf: () => syntheticCountry(100) },
  '600': { label: 'Egypt-size: 600 copies', pbf: () => syntheticCountry(600) },
};

/** Bytes under a directory (files only; the data directory has no links). */
function duBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? duBytes(p) : statSync(p).size;
  }
  return n;
}

/** One whole import in its own process: wall seconds and the highest VmHWM seen while it ran. */
async function importOnce(pbf: string, dataDir: string): Promise<{ seconds: number; peakRssMb: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'import', pbf, '--data', dataDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, statusMb(child.pid!, 'VmHWM') || 0)), 200);
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(sample);
  if (code !== 0) throw new Error(`import of ${pbf} failed (exit ${code}): ${err}`);
  return { seconds: (performance.now() - t0) / 1000, peakRssMb: peak };
}

/** `svcmaps serve` on the data directory: its RSS once /readyz answers, then it stops. */
async function serveRss(dataDir: string): Promise<{ readyS: number; rssMb: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--data', dataDir, '--port', '0', '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    // "svcmaps listening on http://127.0.0.1:<port> ..." names the port.
    const port = await new Promise<number>((res, rej) => {
      child.once('exit', (c) => rej(new Error(`serve exited (${c})`)));
      for (const out of [child.stdout, child.stderr])
        createInterface({ input: out }).on('line', (l) => {
          const m = /listening on https?:\/\/\S+:(\d+)/.exec(l);
          if (m) res(Number(m[1]));
        });
    });
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (r?.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return { readyS: (performance.now() - t0) / 1000, rssMb: statusMb(child.pid!, 'VmRSS') };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

interface Row {
  extract: string;
  pbfMb: number;
  importS: number;
  importPeakRssMb: number;
  diskMb: number;
  serveReadyS: number;
  serveRssMb: number;
  loadAverage: number[];
}

async function main(): Promise<void> {
  const pick = (process.env.BENCH_SIZING ?? 'monaco,100,600').split(',').map((s) => s.trim());
  const rows: Row[] = [];
  for (const name of pick) {
    const x = EXTRACTS[name];
    if (!x) throw new Error(`BENCH_SIZING: unknown extract ${name} (monaco, 100, 600)`);
    const pbf = process.env[`BENCH_SIZING_PBF_${name}`] ?? x.pbf();
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-sizing-'));
    try {
      process.stderr.write(`${x.label}: importing ${pbf}...\n`);
      const imp = await importOnce(pbf, dir);
      const serve = await serveRss(dir);
      rows.push({
        extract: x.label,
        pbfMb: statSync(pbf).size / 2 ** 20,
        importS: imp.seconds,
        importPeakRssMb: imp.peakRssMb,
        diskMb: duBytes(dir) / 2 ** 20,
        serveReadyS: serve.readyS,
        serveRssMb: serve.rssMb,
        loadAverage: loadavg(),
      });
      const r = rows.at(-1)!;
      console.log(
        `${r.extract}: PBF ${r.pbfMb.toFixed(1)} MiB; import ${r.importS.toFixed(1)} s, peak ${r.importPeakRssMb.toFixed(0)} MiB; ` +
          `disk ${r.diskMb.toFixed(0)} MiB; serve ready in ${r.serveReadyS.toFixed(1)} s at ${r.serveRssMb.toFixed(0)} MiB RSS`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`results: ${recordResult('sizing', { rows })}`);
}

await main();
