#!/usr/bin/env node
// `npm run bundle`: the offline bundle, svcmaps-<version>-<platform>-<arch>.tar.gz in .bundle/.
//
// Everything the appliance needs to run on a machine without network: dist/ (compiled here), the production
// node_modules with their native modules built for this platform and Node ABI, the embedded gazetteer
// (data/base/places.db), fonts, styles, bin, install.sh, README.md, package.json, package-lock.json, the deploy/
// examples, docs/, LICENSE and CHANGELOG.md, plus .svcmaps-bundle.json naming the platform and Node ABI it was built for. `./install.sh` inside the
// extracted bundle sees that file and does not run npm.
//
// Nothing in the checkout is written except .bundle/: dist is compiled straight into the staging directory, and
// the production dependencies come from `npm ci --omit=dev --ignore-scripts` in the staging directory (npm's cache
// serves them when it holds them). Of the packages with install scripts, bufferutil and utf-8-validate carry
// prebuilt binaries; better-sqlite3 is compiled by its install script. When the checkout's own node_modules holds
// the same version already built for this Node ABI, its binary is reused instead of compiling it again; otherwise
// `npm rebuild better-sqlite3` compiles it (python3, make and g++ needed). Every native module is loaded from the
// staging directory before the tarball is written.
//
// Usage: node scripts/bundle.mjs [--ref <git revision>] [--out <dir>] [--level <1-9>] [--keep-staging]
//   --ref    bundle the files of that commit (git archive) instead of the working tree
//   --out    directory for the tarball (default: .bundle in the checkout)
//   --level  gzip level (default 6, gzip's own); 1 writes the ~400 MB of a bundle about three times as fast and a
//            bigger file, for a bundle made to be tried rather than carried
//
// The last line of the output is the tarball's path.

import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** What the bundle carries from the source tree besides dist/ and node_modules/. */
const CARRIED = [
  'bin',
  'fonts',
  'styles',
  'data',
  'install.sh',
  'README.md',
  'package.json',
  'package-lock.json',
  'scripts/build-places-base.mjs',
];
/**
 * Carried when the source tree has them: the reverse-proxy examples, and docs/ (the server answers
 * /maps/v1/openapi.json from docs/openapi.yaml), the licence and the changelog.
 */
const OPTIONAL = ['deploy', 'docs', 'LICENSE', 'CHANGELOG.md'];
export const BUNDLE_MARKER = '.svcmaps-bundle.json';

function parseArgs(argv) {
  const o = { ref: undefined, out: join(ROOT, '.bundle'), keepStaging: false, level: 6 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) fail(`${a} needs a value`);
      return v;
    };
    if (a === '--ref') o.ref = value();
    else if (a === '--out') o.out = resolve(value());
    else if (a === '--level') {
      o.level = Number(value());
      if (!Number.isInteger(o.level) || o.level < 1 || o.level > 9) fail(`--level must be 1 to 9, got ${argv[i]}`);
    } else if (a === '--keep-staging') o.keepStaging = true;
    else if (a === '-h' || a === '--help') {
      console.log(
        'usage: node scripts/bundle.mjs [--ref <git revision>] [--out <dir>] [--level <1-9>] [--keep-staging]',
      );
      process.exit(0);
    } else fail(`unknown option ${a}`);
  }
  return o;
}

function fail(msg) {
  console.error(`bundle: ${msg}`);
  process.exit(1);
}

const step = (msg) => console.log(`==> ${msg}`);

/** Runs a command with inherited output (to stderr, so stdout stays ours); fails the bundle when it fails. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 2, 2], ...opts });
  if (r.error) fail(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

function capture(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function dirSize(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of readdirSync(p)) n += dirSize(join(p, e));
  return n;
}

const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;

/** Loads every native module from `dir` in a fresh Node; returns the failures (empty when all load). */
function checkNative(dir) {
  const script = `
    const fails = [];
    const t = (name, fn) => { try { fn(); } catch (e) { fails.push(name + ': ' + String(e.message).split('\\n')[0]); } };
    t('better-sqlite3', () => { const D = require('better-sqlite3'); new D(':memory:').prepare('SELECT 1').get(); });
    t('@napi-rs/canvas', () => require('@napi-rs/canvas').createCanvas(1, 1));
    t('bufferutil', () => require('bufferutil'));
    t('utf-8-validate', () => require('utf-8-validate'));
    t('uWebSockets.js', () => {
      const f = require('path').join(require('path').dirname(require.resolve('uWebSockets.js/package.json')), 'binaries',
        'uws_' + process.platform + '_' + process.arch + '_' + process.versions.modules + '.node');
      require(f);
    });
    console.log(JSON.stringify(fails));`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) return [`node exited ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`];
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** better-sqlite3's compiled binding, reused from the checkout when it is the same version (checked by loading). */
function reuseSqliteBuild(stage) {
  const pkg = 'node_modules/better-sqlite3';
  const from = join(ROOT, pkg, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(from)) return false;
  const version = (p) => JSON.parse(readFileSync(join(p, pkg, 'package.json'), 'utf8')).version;
  if (version(ROOT) !== version(stage)) return false;
  mkdirSync(join(stage, pkg, 'build', 'Release'), { recursive: true });
  cpSync(from, join(stage, pkg, 'build', 'Release', 'better_sqlite3.node'));
  return true;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const name = `${pkg.name}-${pkg.version}-${process.platform}-${process.arch}`;
  const stage = join(o.out, name);
  const tarball = join(o.out, `${name}.tar.gz`);
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc))
    fail(`${tsc} is missing: run npm ci in ${ROOT} first (the bundle is built from a dev checkout)`);
  mkdirSync(o.out, { recursive: true });
  rmSync(stage, { recursive: true, force: true });
  rmSync(tarball, { force: true });
  mkdirSync(stage, { recursive: true });

  // Source: the working tree, or one commit's files.
  let src = ROOT;
  let commit = capture('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']);
  if (o.ref) {
    commit = capture('git', ['-C', ROOT, 'rev-parse', '--short', `${o.ref}^{commit}`]);
    if (!commit) fail(`--ref ${o.ref} is not a commit in ${ROOT}`);
    src = join(o.out, `.source-${commit}`);
    rmSync(src, { recursive: true, force: true });
    mkdirSync(src);
    step(`source: commit ${commit} (git archive)`);
    const archive = spawnSync('git', ['-C', ROOT, 'archive', '--format=tar', commit], {
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 2],
    });
    if (archive.status !== 0) fail(`git archive ${commit} failed`);
    run('tar', ['-x', '-C', src], { input: archive.stdout, stdio: ['pipe', 2, 2] });
    // tsc resolves @types and the dependencies' types through node_modules.
    symlinkSync(join(ROOT, 'node_modules'), join(src, 'node_modules'), 'dir');
  } else {
    step(`source: working tree ${ROOT}${commit ? ` (HEAD ${commit}, uncommitted changes included)` : ''}`);
  }

  step('compiling dist/');
  run(process.execPath, [tsc, '-p', join(src, 'tsconfig.json'), '--outDir', join(stage, 'dist')], { cwd: src });
  step('building the web console into dist/console');
  run(process.execPath, [join(src, 'scripts', 'build-console.mjs'), '--out', join(stage, 'dist', 'console')], {
    cwd: src,
  });

  step('copying ' + CARRIED.join(', '));
  for (const p of CARRIED) {
    if (!existsSync(join(src, p))) fail(`${p} is missing in ${src}`);
    mkdirSync(dirname(join(stage, p)), { recursive: true });
    // data/base (the gazetteer built by prepare) is made below, for the dist/ compiled here.
    cpSync(join(src, p), join(stage, p), {
      recursive: true,
      filter: (f) => !f.startsWith(join(src, 'data', 'base')),
    });
  }
  for (const p of OPTIONAL) if (existsSync(join(src, p))) cpSync(join(src, p), join(stage, p), { recursive: true });
  // dist/ is prebuilt: an `npm ci` inside the bundle must not try to compile it (TypeScript is a dev dependency).
  const stagedPkg = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  delete stagedPkg.scripts?.prepare;
  writeFileSync(join(stage, 'package.json'), JSON.stringify(stagedPkg, null, 2) + '\n');

  step('production dependencies: npm ci --omit=dev --ignore-scripts');
  const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
  run(npm[0], [...npm[1], 'ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: stage });

  // uWebSockets.js ships its binaries for every platform (about 6 MB each); the bundle is for one platform.
  const uwsBin = join(stage, 'node_modules', 'uWebSockets.js', 'binaries');
  if (existsSync(uwsBin))
    for (const f of readdirSync(uwsBin))
      if (!f.startsWith(`uws_${process.platform}_${process.arch}_`)) rmSync(join(uwsBin, f));

  step('native modules');
  const reused = reuseSqliteBuild(stage);
  let fails = checkNative(stage);
  if (reused && !fails.length)
    console.log('    better-sqlite3: reused the binary built in this checkout (same version, loads)');
  if (fails.some((f) => f.startsWith('better-sqlite3') || f.startsWith('node exited'))) {
    console.log('    better-sqlite3: compiling (npm rebuild better-sqlite3)');
    rmSync(join(stage, 'node_modules', 'better-sqlite3', 'build'), { recursive: true, force: true });
    run(npm[0], [...npm[1], 'rebuild', 'better-sqlite3', '--foreground-scripts'], { cwd: stage });
    fails = checkNative(stage);
  }
  if (fails.length) fail(`native modules do not load in the bundle:\n  ${fails.join('\n  ')}`);
  // A compile leaves its intermediate files behind; running needs the binding only (deps/, the SQLite sources, stays
  // so that `npm rebuild better-sqlite3` can still compile it in the field).
  const sqlite = join(stage, 'node_modules', 'better-sqlite3');
  for (const junk of [
    'build/Release/obj',
    'build/Release/obj.target',
    'build/Release/.deps',
    'build/Release/test_extension.node',
    'build/Release/sqlite3.a',
  ])
    rmSync(join(sqlite, junk), { recursive: true, force: true });
  console.log('    better-sqlite3, @napi-rs/canvas, bufferutil, utf-8-validate and uWebSockets.js load');

  step('embedded gazetteer (data/base/places.db)');
  const base = join(ROOT, 'data', 'base');
  if (existsSync(join(base, 'places.db')) && existsSync(join(base, 'places.db.stamp'))) {
    // Reused when its stamp (a hash of its inputs) matches the dist/ compiled here; rebuilt otherwise.
    mkdirSync(join(stage, 'data', 'base'), { recursive: true });
    for (const f of ['places.db', 'places.db.stamp']) cpSync(join(base, f), join(stage, 'data', 'base', f));
  }
  run(process.execPath, [join(stage, 'scripts', 'build-places-base.mjs')], { cwd: stage });
  rmSync(join(stage, 'data', 'base', 'places.db-wal'), { force: true });
  rmSync(join(stage, 'data', 'base', 'places.db-shm'), { force: true });

  step('CLI check');
  run(process.execPath, [join(stage, 'bin', 'svcmaps'), '--help'], { cwd: stage, stdio: ['ignore', 'ignore', 2] });

  const marker = {
    name: pkg.name,
    version: pkg.version,
    platform: process.platform,
    arch: process.arch,
    node: process.versions.node,
    node_abi: process.versions.modules,
    commit: commit ?? null,
    built_at: new Date().toISOString(),
  };
  writeFileSync(join(stage, BUNDLE_MARKER), JSON.stringify(marker, null, 2) + '\n');

  step(`writing ${tarball} (${mb(dirSize(stage))} before compression)`);
  run('tar', [
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '-I',
    `gzip -${o.level}`,
    '-cf',
    tarball,
    '-C',
    o.out,
    name,
  ]);
  if (!o.keepStaging) rmSync(stage, { recursive: true, force: true });
  if (src !== ROOT) rmSync(src, { recursive: true, force: true });
  console.log(
    `    ${mb(statSync(tarball).size)} in ${((Date.now() - t0) / 1000).toFixed(0)} s for ${process.platform}-${process.arch}, Node ${process.versions.node} (module ABI ${process.versions.modules})`,
  );
  console.log(tarball);
}

main();
