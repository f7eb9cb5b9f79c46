import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';

/** `node` arguments that run the CLI from the TypeScript sources, as bin/svcmaps runs the built one. */
export const CLI = ['--import', 'tsx', join(__dirname, 'run-cli.ts')];

/** Runs the CLI in-process with captured output (and the given environment instead of the test's). */
export async function cli(...args: string[]) {
  return cliWithEnv({}, ...args);
}

export async function cliWithEnv(env: NodeJS.ProcessEnv, ...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(['node', 'svcmaps', ...args], { out: (t) => (out += t), err: (t) => (err += t), env });
  return { code, out, err };
}

/** Runs the CLI as a separate process (another writer on the same SQLite files, real signals). */
export function cliProcess(...args: string[]) {
  const r = spawnSync(process.execPath, [...CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SVCMAPS_DATA: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** `svcmaps serve --port 0` as a real process, resolved with its URL once it listens; `log()` is its stderr so far. */
export function serveProcess(args: string[]): Promise<{ proc: ChildProcess; url: string; log: () => string }> {
  const proc = spawn(process.execPath, [...CLI, 'serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SVCMAPS_DATA: '' },
  });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ proc, url: m[1]!, log: () => err });
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

/** Resolves with the exit code once the process has exited (at once if it already has). */
export const exited = (p: ChildProcess) =>
  new Promise<number | null>((r) => (p.exitCode !== null ? r(p.exitCode) : p.once('exit', (c) => r(c))));
