import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { needsSystem } from '../helpers/system.js';
import { cleanEnv, copySource, IS_ROOT, nodeOnPath, runToEnd } from '../helpers/install.js';
import { HUGE_PAGES_TUNABLE } from '../../src/ops/huge-pages.js';

/** `bin/svcmaps serve` of an installed app as its own process; resolves with its URL once it listens. */
function serveInstalled(app: string, data: string): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(
    process.execPath,
    [join(app, 'bin', 'svcmaps'), 'serve', '--data', data, '--host', '127.0.0.1', '--port', '0'],
    { cwd: tmpdir(), env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve({ proc, url: m[1]! });
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

describe('install.sh from a fresh copy of the checkout (real npm ci)', () => {
  let base: string;
  let app: string;
  let data: string;
  let unit: string;
  let install: { code: number | null; out: string; err: string };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'svcmaps-install-'));
    app = join(base, 'opt', 'svcmaps');
    data = join(base, 'var', 'svcmaps');
    unit = join(base, 'unit', 'svcmaps.service');
    copySource(app);
    expect(existsSync(join(app, 'node_modules'))).toBe(false);
    expect(existsSync(join(app, 'dist'))).toBe(false);
    mkdirSync(dirname(unit));
    // A data directory carried over a medium without Unix modes: the secret arrives world-readable.
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'tile-token.secret'), 'ab'.repeat(32) + '\n', { mode: 0o644 });
    // ... and the pid file of the server that ran on the machine it was prepared on.
    writeFileSync(join(data, 'svcmaps.pid'), JSON.stringify({ pid: 1, url: 'http://127.0.0.1:1', started_at: '' }));
    const user = IS_ROOT ? ['--user', 'root'] : []; // as root, the default would create a system user on this host
    install = await runToEnd(
      'bash',
      [join(app, 'install.sh'), '--prefix', app, '--data', data, '--unit-file', unit, ...user],
      // npm's cache serves the packages it holds (the install is still a full npm ci from the lock file).
      { cwd: base, env: cleanEnv({ npm_config_prefer_offline: 'true' }) },
    );
  }, 900_000);

  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('runs npm ci, builds dist/ and the gazetteer; tightens a copied secret to 0600, drops a stale pid file', () => {
    expect(install.code, install.out + install.err).toBe(0);
    expect(install.out).toContain(`npm ci --include=dev --no-audit --no-fund in ${app}`);
    expect(install.out).not.toMatch(/npm step: +skipped/);
    expect(install.out).toContain('native modules load (better-sqlite3, @napi-rs/canvas)');
    for (const f of [
      'dist/cli/main.js',
      'data/base/places.db',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
    ])
      expect(existsSync(join(app, f)), f).toBe(true);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'tile-token.secret')).mode & 0o777).toBe(0o600);
    expect(install.err).toMatch(/tile-token\.secret had mode 644; set to 0600/);
    expect(install.out).toContain(
      `removed a stale ${join(data, 'svcmaps.pid')} (pid 1 is not a running svcmaps server`,
    );
    expect(existsSync(join(data, 'svcmaps.pid'))).toBe(false);
  });

  it('`npx svcmaps` in the installed checkout runs its command at once, building nothing again', async () => {
    // npm exec installs the checkout into its npx cache to link the command, and runs the prepare script on it:
    // with dist/ and the gazetteer built by npm ci, that run must not compile again (~13 s before the command)
    const main = join(app, 'dist', 'cli', 'main.js');
    const compiled = statSync(main).mtimeMs;
    const r = await runToEnd('npx', ['svcmaps', '--version'], {
      cwd: app,
      // a newcomer's npm cache, holding no npx install of an earlier run
      env: cleanEnv({ npm_config_cache: join(base, 'npm-cache'), npm_config_offline: 'true' }),
    });
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out.trim()).toBe(
      (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { version: string }).version,
    );
    expect(statSync(main).mtimeMs).toBe(compiled);
  }, 60_000);

  it('the installed server answers /livez, and the unit ExecReload (svcmaps reload) reloads it', async () => {
    const { proc, url } = await serveInstalled(app, data);
    try {
      expect((await fetch(`${url}/livez`)).status).toBe(200);
      const reload = readFileSync(unit, 'utf8')
        .match(/^ExecReload=(.*)$/m)![1]!
        .split(' ');
      const r = await runToEnd(reload[0]!, reload.slice(1), { cwd: tmpdir(), env: cleanEnv() });
      expect(r.code, r.out + r.err).toBe(0);
      expect(r.out).toMatch(/^Reloaded server \d+ \(http:\/\/127\.0\.0\.1:\d+\):/);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
    }
  }, 60_000);

  it('writes a hardened systemd unit that passes systemd-analyze verify', () => {
    const text = readFileSync(unit, 'utf8');
    const user = IS_ROOT ? 'root' : userInfo().username;
    for (const line of [
      `User=${user}`,
      `ExecStart=${nodeOnPath()} ${app}/bin/svcmaps serve --data ${data} --host 127.0.0.1 --port 8080`,
      `ExecReload=${nodeOnPath()} ${app}/bin/svcmaps reload --data ${data}`,
      `Environment=GLIBC_TUNABLES=${HUGE_PAGES_TUNABLE}`,
      'Restart=on-failure',
      'RestartSec=2',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      `ReadWritePaths=${data}`,
      'PrivateTmp=yes',
      'WantedBy=multi-user.target',
    ])
      expect(text.split('\n'), line).toContain(line);
    // read-only when the app, the data or node lies under /home, /root or /run/user (ReadWritePaths keeps data writable)
    const underHome = [app, data, nodeOnPath()].some((p) => /^\/(home|root|run\/user)\//.test(p));
    expect(text).toMatch(underHome ? /^ProtectHome=read-only$/m : /^ProtectHome=yes$/m);
    if (!needsSystem('systemd', '/usr/bin/systemd-analyze', 'the systemd unit check')) return;
    const v = spawnSync('/usr/bin/systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(v.status, v.stderr).toBe(0);
    expect(v.stderr.trim()).toBe('');
  });
});
