/**
 * Benchmark results as data. Every bench records its figures with when, on what machine and from which commit they
 * were measured: bench/results/<name>-<time>.json keeps every run on this machine (not committed), and
 * bench/latest/<name>.json holds the latest one, committed, from which `npm run docs:benchmarks`
 * (scripts/gen-benchmarks.mjs) writes docs/benchmarks.md. A figure in the docs can always be traced to a run.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The commit measured: short hash, with `-dirty` when tracked files differ from it. */
function commit(): string {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  const hash = git('rev-parse', '--short', 'HEAD') || 'unknown';
  // The results this bench and earlier ones wrote do not make the measured code dirty.
  return git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/latest') ? `${hash}-dirty` : hash;
}

export interface Recorded<T> {
  benchmark: string;
  at: string;
  commit: string;
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; os: string };
  figures: T;
}

/** Writes the run's figures to bench/results/ and bench/latest/; returns the results file's path. */
export function recordResult<T>(name: string, figures: T): string {
  const at = new Date().toISOString();
  const result: Recorded<T> = {
    benchmark: name,
    at,
    commit: commit(),
    machine: {
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      cores: availableParallelism(),
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      os: `${platform()} ${release()}`,
    },
    figures,
  };
  const text = JSON.stringify(result, null, 2) + '\n';
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  mkdirSync(join(ROOT, 'bench/latest'), { recursive: true });
  const file = join(ROOT, 'bench/results', `${name}-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, text);
  writeFileSync(join(ROOT, 'bench/latest', `${name}.json`), text);
  return relative(ROOT, file);
}
