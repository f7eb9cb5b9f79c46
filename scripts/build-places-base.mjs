#!/usr/bin/env node
// Prebuilds the embedded gazetteer (data/base/places.db) after compilation, so `svcmaps serve` on a fresh data
// directory copies it instead of spending ~15 s building it. Rebuilt only when its inputs change (a content stamp).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const { buildGazetteer, BASE_PLACES } = await import('../dist/places/load.js');
const inputs = [
  '../data/geonames-ar.tsv',
  '../dist/places/sources/gazetteer.js',
  '../dist/places/sources/countries.js',
  '../dist/store/places/builder.js',
  '../dist/store/places/columns-file.js',
  '../dist/store/places/index-db.js',
  '../dist/store/places/schema.js',
  '../dist/core/normalize.js',
];
const hash = createHash('sha256');
for (const f of inputs) hash.update(readFileSync(new URL(f, import.meta.url)));
const stamp = hash.digest('hex');
const stampFile = `${BASE_PLACES}.stamp`;
if (existsSync(BASE_PLACES) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
  console.log(`embedded gazetteer is current: ${BASE_PLACES}`);
} else {
  mkdirSync(dirname(BASE_PLACES), { recursive: true });
  const t = Date.now();
  const n = await buildGazetteer(BASE_PLACES);
  writeFileSync(stampFile, stamp);
  console.log(
    `built the embedded gazetteer: ${n} places in ${((Date.now() - t) / 1000).toFixed(1)} s -> ${BASE_PLACES}`,
  );
}
