#!/usr/bin/env node
// Prebuilds the embedded gazetteer (data/base/places.db) after compilation, so `svcmaps serve` on a fresh data
// directory copies it instead of spending ~20 s building it. Safe to re-run; skipped when already current.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

const { buildGazetteer, BASE_PLACES } = await import('../dist/places/load.js');
const sources = [new URL('../data/geonames-ar.tsv', import.meta.url), new URL('../dist/places/sources/gazetteer.js', import.meta.url)];
const newest = Math.max(...sources.map((u) => statSync(u).mtimeMs));
if (existsSync(BASE_PLACES) && statSync(BASE_PLACES).mtimeMs > newest) {
  console.log(`embedded gazetteer is current: ${BASE_PLACES}`);
} else {
  mkdirSync(dirname(BASE_PLACES), { recursive: true });
  const t = Date.now();
  const n = await buildGazetteer(BASE_PLACES);
  console.log(`built the embedded gazetteer: ${n} places in ${((Date.now() - t) / 1000).toFixed(1)} s -> ${BASE_PLACES}`);
}
