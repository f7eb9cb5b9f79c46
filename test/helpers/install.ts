import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Helpers of the field-install tests (install.sh from a fresh copy, the offline bundle). */

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const IS_ROOT = process.getuid?.() === 0;

/**
 * The files a fresh clone holds: git's tracked and untracked-but-not-ignored files in a git checkout, otherwise
 * (a copy such as the one .ci/run tests in) everything except what .gitignore names (node_modules, dist, data/base...).
 */
export function copySource(to: string): void {
  mkdirSync(to, { recursive: true });
  const git = existsSync(join(REPO, '.git'))
    ? spawnSync('git', ['-C', REPO, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      })
    : undefined;
  if (git && git.status === 0) {
    for (const f of git.stdout.split('\0').filter(Boolean)) {
      if (!existsSync(join(REPO, f))) continue; // deleted in the working tree
      mkdirSync(dirname(join(to, f)), { recursive: true });
      cpSync(join(REPO, f), join(to, f));
    }
    return;
  }
  const ignored = readFileSync(join(REPO, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim().replace(/^\/|\/$/g, ''))
    .filter((l) => l && !l.startsWith('#'));
  const skip = (rel: string) =>
    rel === '.git' ||
    ignored.some((p) => (p.startsWith('*.') ? rel.endsWith(p.slice(1)) : rel === p || rel.startsWith(`${p}/`)));
  cpSync(REPO, to, { recursive: true, filter: (src) => !skip(relative(REPO, src)) });
}

/** The environment of a newcomer's shell: nothing from the npm that may be running the tests, no SVCMAPS_*. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_|svcmaps_)/i.test(k) && k !== 'INIT_CWD' && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
}

/** Runs a command to its end, collecting stdout and stderr. */
export function runToEnd(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/** The node install.sh finds (`command -v node`), which is what it writes into the unit. */
export function nodeOnPath(): string {
  return spawnSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).stdout.trim();
}
