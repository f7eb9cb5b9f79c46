#!/usr/bin/env node
// Builds the SDF glyph PBFs served for the "Noto Sans Regular" fontstack.
//
// Each range is rendered from Noto Sans Regular and from Noto Sans Arabic
// Regular with fontnik, then merged with @mapbox/glyph-pbf-composite so that a
// single fontstack covers Latin and Arabic. Output is deterministic: re-running
// rewrites identical bytes.
//
// Usage: node scripts/build-glyphs.mjs   (npm run build:glyphs)

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const FONTSTACK = 'Noto Sans Regular';
// Array order is glyph priority in the composite: where both fonts have a
// codepoint (ASCII, Latin-1, general punctuation, ZWJ/ZWNJ...), Noto Sans wins
// and Noto Sans Arabic only fills the gaps.
const FONTS = [
  { pkg: '@expo-google-fonts/noto-sans', file: '400Regular/NotoSans_400Regular.ttf' },
  { pkg: '@expo-google-fonts/noto-sans-arabic', file: '400Regular/NotoSansArabic_400Regular.ttf' },
];
// Start codepoints of 256-codepoint ranges. 64256 (U+FB00) and 65024 (U+FE00)
// hold the Arabic presentation forms MapLibre requests after shaping Arabic.
const REQUIRED = [0, 256, 1536, 64256, 65024];
// Written only when at least one font has glyphs in them.
const OPTIONAL = [];

const outDir = join(root, 'fonts', FONTSTACK);

async function main() {
  // Loaded lazily so a missing/unloadable native binary is reported by the
  // catch below. fontnik's index.js only loads prebuilds/<platform>-<arch>
  // (or a local build/); it never compiles at require time.
  const fontnik = require('fontnik');
  const composite = require('@mapbox/glyph-pbf-composite');
  // fontnik.range(options, callback) is callback-only.
  const renderRange = promisify(fontnik.range);

  const fonts = FONTS.map(({ pkg, file }) => {
    const path = require.resolve(`${pkg}/${file}`);
    return { path, data: readFileSync(path) };
  });
  for (const f of fonts) console.log(`font ${relative(root, f.path)}`);

  mkdirSync(outDir, { recursive: true });

  const starts = [...REQUIRED, ...OPTIONAL].sort((a, b) => a - b);
  for (const start of starts) {
    const end = start + 255;
    const name = `${start}-${end}.pbf`;
    const target = join(outDir, name);

    // Rendered one range at a time so logs and failures stay in order.
    const parts = [];
    for (const f of fonts) parts.push(await renderRange({ font: f.data, start, end }));

    // combine() keeps the first buffer's `range` ("start-end") and, without
    // the second argument, would join the face names into
    // "Noto Sans Regular, Noto Sans Arabic Regular"; pin the fontstack name.
    const pbf = Buffer.from(composite.combine(parts, FONTSTACK));
    const stack = composite.decode(pbf).stacks[0];
    if (stack.name !== FONTSTACK || stack.range !== `${start}-${end}`) {
      throw new Error(`${name}: unexpected fontstack header ${stack.name} / ${stack.range}`);
    }

    if (stack.glyphs.length === 0) {
      if (REQUIRED.includes(start)) throw new Error(`${name}: no glyphs in a required range`);
      rmSync(target, { force: true }); // drop a stale file from an earlier run
      console.log(`${name}: empty, skipped`);
      continue;
    }
    writeFileSync(target, pbf);
    console.log(`${name}: ${pbf.length} bytes, ${stack.glyphs.length} glyphs`);
  }

  writeLicence();
}

// fonts/OFL.txt: each package ships LICENSE_FONT = its copyright line followed
// by the OFL 1.1 text. Keep every copyright line and the shared text once.
function writeLicence() {
  const texts = FONTS.map(({ pkg }) =>
    readFileSync(require.resolve(`${pkg}/LICENSE_FONT`), 'utf8').replace(/\r\n/g, '\n'),
  );
  const split = texts.map((t) => {
    const nl = t.indexOf('\n');
    return { copyright: t.slice(0, nl), body: t.slice(nl + 1) };
  });
  const sameBody = split.every((s) => s.body === split[0].body);
  const out = sameBody ? split.map((s) => s.copyright).join('\n') + '\n' + split[0].body : texts.join('\n\n');
  writeFileSync(join(root, 'fonts', 'OFL.txt'), out);
  console.log(`OFL.txt: ${Buffer.byteLength(out)} bytes`);
}

main().catch((err) => {
  console.error(`build-glyphs: failed: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
