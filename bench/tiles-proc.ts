/** Child-process plumbing for the tiles benchmark: start a server script, read its ready line, read its RSS, stop it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ReadyLine } from './lifecycle.js';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..');
const children = new Set<ChildProcess>();
process.on('exit', () => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));

/** A field of /proc/<pid>/status in MiB (VmRSS now, VmHWM the peak); NaN once the process is gone. */
export function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return (
      Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
    );
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return NaN; // the process has just exited
    throw e;
  }
}

export interface Proc {
  port: number;
  ready: ReadyLine;
  pid: number;
  rssMb(): number;
  /** CPU time (user + system, all threads) the process has used so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * Starts `script` under node with tsx. BENCH_SERVER_NODE_ARGS adds node flags to the server alone, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it (node refuses --cpu-prof in NODE_OPTIONS).
 */
export function startProc(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', join(HERE, script), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.add(child);
  const exited = new Promise<void>((r) => child.once('exit', () => (children.delete(child), r())));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${script}: no ready line in 60 s`)), 60_000);
    child.once('exit', (code) => rej(new Error(`${script} exited early (${code})`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const ready = JSON.parse(line) as ReadyLine;
      child.stdout.resume();
      res({
        port: ready.port,
        ready,
        pid: child.pid!,
        cpuMs: () => {
          const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ = 100)
        },
        rssMb: () => statusMb(child.pid!, 'VmRSS'),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** Runs the CLI to completion in a child process; resolves with stdout. */
export function runCli(args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/helpers/run-cli.ts'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((res, rej) =>
    child.once('exit', (code) =>
      code === 0 ? res(out) : rej(new Error(`svcmaps ${args[0]} failed (${code}): ${err.slice(-500)}`)),
    ),
  );
}
