#!/usr/bin/env node
// Builds the web console into dist/console (or --out DIR): console/main.ts bundled by esbuild, the stylesheet, and
// MapLibre GL JS's own files from the maplibre-gl package, every asset under a content-hashed name so the appliance can
// serve /console/assets/* as immutable; index.html names them and is the only file served with no-cache.
import { build } from 'esbuild';
import { consoleBundleOptions } from './console-bundle.mjs';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--out');
const OUT = at > 0 ? process.argv[at + 1] : join(ROOT, 'dist', 'console');
const SRC = join(ROOT, 'console');
const ASSETS = '/console/assets';
const hash = (...bufs) => {
  const h = createHash('sha256');
  for (const b of bufs) h.update(b);
  return h.digest('hex').slice(0, 12);
};

const started = Date.now();
const tmp = `${OUT}.tmp-${process.pid}`;
rmSync(tmp, { recursive: true, force: true });
mkdirSync(join(tmp, 'assets'), { recursive: true });

// MapLibre's module finds its worker next to itself (import.meta.url): its files keep their names in a hashed folder.
const mlDist = join(ROOT, 'node_modules', 'maplibre-gl', 'dist');
const mlFiles = ['maplibre-gl.mjs', 'maplibre-gl-worker.mjs', 'maplibre-gl-shared.mjs', 'maplibre-gl.css'];
const mlHash = hash(...mlFiles.map((f) => readFileSync(join(mlDist, f))));
const mlDir = `maplibre-${mlHash}`;
mkdirSync(join(tmp, 'assets', mlDir));
for (const f of mlFiles) cpSync(join(mlDist, f), join(tmp, 'assets', mlDir, f));

const result = await build(consoleBundleOptions(ROOT, `${ASSETS}/${mlDir}/maplibre-gl.mjs`));
const js = Buffer.from(result.outputFiles[0].contents);
const jsName = `console-${hash(js)}.js`;
writeFileSync(join(tmp, 'assets', jsName), js);
const css = readFileSync(join(SRC, 'console.css'));
const cssName = `console-${hash(css)}.css`;
writeFileSync(join(tmp, 'assets', cssName), css);

const html = readFileSync(join(SRC, 'index.html'), 'utf8')
  .replaceAll('__MAPLIBRE_CSS__', `${ASSETS}/${mlDir}/maplibre-gl.css`)
  .replaceAll('__CONSOLE_CSS__', `${ASSETS}/${cssName}`)
  .replaceAll('__CONSOLE_JS__', `${ASSETS}/${jsName}`);
writeFileSync(join(tmp, 'index.html'), html);

rmSync(OUT, { recursive: true, force: true });
mkdirSync(dirname(OUT), { recursive: true });
cpSync(tmp, OUT, { recursive: true });
rmSync(tmp, { recursive: true, force: true });
// The console's own code (script, stylesheet, page; MapLibre aside) stays under 150 kB gzipped (issue 14).
const BUDGET = 150 * 1024;
const gz = (b) => gzipSync(b, { level: 9 }).length;
const own = gz(js) + gz(css) + gz(Buffer.from(html));
console.log(
  `console built in ${OUT} (${jsName}, ${js.length} bytes, ${gz(js)} gzipped; ` +
    `script, stylesheet and page ${own} bytes gzipped of a ${BUDGET} budget) in ${Date.now() - started} ms`,
);
if (own > BUDGET) {
  console.error(`the console's own code is ${own} bytes gzipped, over its ${BUDGET}-byte budget`);
  process.exit(1);
}
