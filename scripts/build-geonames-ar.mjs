#!/usr/bin/env node
// Converts Debian libgeonames-common's Arabic catalog (GeoNames id -> Arabic name, CC BY 4.0) into data/geonames-ar.tsv,
// the language-tagged Arabic names the embedded gazetteer prefers over Arabic-script alternate names.
// Usage: apt-get install libgeonames-common && node scripts/build-geonames-ar.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const MO = process.argv[2] ?? '/usr/share/locale/ar/LC_MESSAGES/geonames.mo';
const OUT = new URL('../data/geonames-ar.tsv', import.meta.url);
const ARABIC = /[\u0600-\u06FF]/;

/** GNU gettext .mo: magic, revision, count, offset of originals table, offset of translations table. */
function readMo(buf) {
  const le = buf.readUInt32LE(0) === 0x950412de;
  const u32 = (o) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const n = u32(8);
  const origOff = u32(12);
  const transOff = u32(16);
  const entries = [];
  for (let i = 0; i < n; i++) {
    const ol = u32(origOff + i * 8),
      oo = u32(origOff + i * 8 + 4);
    const tl = u32(transOff + i * 8),
      to = u32(transOff + i * 8 + 4);
    entries.push([buf.toString('utf8', oo, oo + ol), buf.toString('utf8', to, to + tl)]);
  }
  return entries;
}

const rows = readMo(readFileSync(MO))
  .filter(([id]) => /^\d+$/.test(id))
  .map(([id, name]) => [id, name.replace(/[\u200e\u200f\u202a-\u202e]/g, '').trim()])
  .filter(([, name]) => name && ARABIC.test(name) && !/[\t\n]/.test(name))
  .sort((a, b) => Number(a[0]) - Number(b[0]));
writeFileSync(
  OUT,
  '# GeoNames id\tArabic name. From GeoNames (https://www.geonames.org), CC BY 4.0, via Debian libgeonames-common.\n' +
    rows.map((r) => r.join('\t')).join('\n') +
    '\n',
);
console.log(`wrote ${rows.length} Arabic names to ${OUT.pathname}`);
