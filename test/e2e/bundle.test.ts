import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needsSystem } from '../helpers/system.js';
import { cleanEnv, IS_ROOT, REPO, runToEnd } from '../helpers/install.js';

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
const NAME = `svcmaps-${pkg.version}-${process.platform}-${process.arch}`;

/**
 * Whether this machine can cut a process off the network (`unshare -n`, which needs root). Without it the offline
 * test skips with one line; under CI it fails instead, so CI cannot pass by skipping.
 */
function canIsolate(): boolean {
  if (!needsSystem('util-linux', 'unshare', 'the offline bundle test')) return false;
  if (!needsSystem('iproute2', 'ip', 'the offline bundle test')) return false;
  const probe = spawnSync('unshare', ['-n', 'true'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  const line = `the offline bundle test needs \`unshare -n\` (root): ${probe.stderr.trim() || `exit ${probe.status}`}`;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(line);
  console.warn(`skipped: ${line}`);
  return false;
}

describe('the offline bundle', () => {
  let base: string;
  let build: { code: number | null; out: string; err: string };
  let tarball: string;
  let app: string;
  let ms = 0;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'svcmaps-bundle-'));
    const t0 = Date.now();
    build = await runToEnd(
      process.execPath,
      // gzip -1: what the test checks does not depend on how hard the tarball is compressed (-6 took ~70 s of it)
      [join(REPO, 'scripts', 'bundle.mjs'), '--out', join(base, 'out'), '--level', '1'],
      {
        cwd: REPO,
        env: cleanEnv({ npm_config_prefer_offline: 'true' }),
      },
    );
    ms = Date.now() - t0;
    tarball = build.out.trimEnd().split('\n').pop() ?? '';
    // Carried to the field: extracted somewhere else; the bundle dir must be readable by an unprivileged user.
    const field = join(base, 'field');
    mkdirSync(field);
    chmodSync(base, 0o755);
    chmodSync(field, 0o755);
    if (build.code === 0) {
      const x = spawnSync('tar', ['xzf', tarball, '-C', field], { encoding: 'utf8' });
      if (x.status !== 0) throw new Error(`tar xzf ${tarball}: ${x.stderr}`);
    }
    app = join(field, NAME);
  }, 900_000);

  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('npm run bundle writes svcmaps-<version>-<platform>-<arch>.tar.gz and prints its path last', () => {
    expect(build.code, build.out + build.err).toBe(0);
    expect(tarball).toBe(join(base, 'out', `${NAME}.tar.gz`));
    console.log(`bundle: ${(statSync(tarball).size / 1e6).toFixed(0)} MB in ${(ms / 1000).toFixed(0)} s`);
  });

  it('holds dist, production node_modules with native modules, the gazetteer and the files to install', () => {
    for (const f of [
      'dist/cli/main.js',
      'dist/console/index.html',
      'bin/svcmaps',
      'install.sh',
      'README.md',
      'package.json',
      'package-lock.json',
      'fonts',
      'styles/svc.json',
      'data/geonames-ar.tsv',
      'data/base/places.db',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      `node_modules/uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
      '.svcmaps-bundle.json',
    ])
      expect(existsSync(join(app, f)), f).toBe(true);
    for (const dev of ['typescript', 'vitest', 'eslint'])
      expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    expect(JSON.parse(readFileSync(join(app, '.svcmaps-bundle.json'), 'utf8'))).toMatchObject({
      version: pkg.version,
      platform: process.platform,
      arch: process.arch,
      node_abi: process.versions.modules,
    });
  });

  it('installs and passes selftest with no network at all (unshare -n), as an unprivileged user', async () => {
    if (!canIsolate()) return;
    expect(build.code).toBe(0);
    const home = join(base, 'home');
    mkdirSync(home);
    // As root, run as nobody: the non-root path of install.sh (no service user, no unit).
    const asUser = IS_ROOT && spawnSync('id', ['-u', 'nobody']).status === 0;
    if (asUser) {
      const uid = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout);
      chownSync(home, uid, -1);
    }
    const data = join(home, 'data');
    const steps = [
      // Proof that nothing leaves the machine: a connection to any outside address fails at once.
      `node -e "require('net').connect(443, '104.16.0.35').on('connect', () => process.exit(1)).on('error', () => process.exit(0))"`,
      `./install.sh --data ${data} --no-systemd`,
      // with a V8 option, as operators start big imports: the engine threads inherit it (module-worker.ts)
      `node --max-old-space-size=2048 ./bin/svcmaps selftest --data ${data} --json`,
    ].join(' && ');
    const inner = asUser
      ? `ip link set lo up && exec runuser -u nobody -- env HOME=${home} TMPDIR=${home} sh -c '${steps.replace(/'/g, `'\\''`)}'`
      : `ip link set lo up && ${steps}`;
    const r = await runToEnd('unshare', ['-n', '--', 'sh', '-c', inner], {
      cwd: app,
      env: cleanEnv({ HOME: home, TMPDIR: home }),
    });
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain('npm step:       skipped (offline bundle');
    expect(r.out).toContain('native modules load (better-sqlite3, @napi-rs/canvas)');
    if (asUser) expect(r.out).toContain('running as nobody (not root)');
    const report = JSON.parse(r.out.trimEnd().split('\n').pop()!) as { verdict: string; failed: number };
    expect(report).toMatchObject({ verdict: 'pass', failed: 0 });
  }, 300_000);
});
