#!/usr/bin/env node
// The package's prepare step, which `npm install` and `npm ci` run: compile, bundle the console, prebuild the
// gazetteer. `npx svcmaps` in the checkout runs it too: npm exec installs the checkout itself into its npx cache to
// link the command, and prepares it there, in this very directory. That run has nothing to build (npm install
// built dist/ and the gazetteer), and rebuilding made the first `npx svcmaps serve` start ~13 s late.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const built = ['dist/cli/main.js', 'data/base/places.db'].every((f) => existsSync(join(root, f)));
if (process.env.npm_command === 'exec' && built) process.exit(0);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
for (const args of [[tsc, '-p', 'tsconfig.json'], ['scripts/build-console.mjs'], ['scripts/build-places-base.mjs']]) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
