import { hasArabic } from '../../core/normalize.js';
import { osmPhotoUrls } from '../photos.js';
import { cityImportance } from './gazetteer.js';

/** What an OSM object is to the places index, or undefined when it is not searchable. */
export interface OsmClass {
  kind: string;
  category: string | null;
  importance: number;
}

const PLACE_IMPORTANCE: Record<string, number> = {
  city: 0.75,
  town: 0.55,
  village: 0.4,
  suburb: 0.42,
  quarter: 0.32,
  neighbourhood: 0.3,
  hamlet: 0.25,
  locality: 0.2,
};
const POI_KEYS = [
  'amenity',
  'shop',
  'tourism',
  'leisure',
  'office',
  'craft',
  'healthcare',
  'historic',
  'aeroway',
  'railway',
  'public_transport',
  'man_made',
  'sport',
];
const NOTABLE: Record<string, number> = {
  aerodrome: 0.5,
  hospital: 0.35,
  university: 0.35,
  stadium: 0.33,
  station: 0.32,
  mall: 0.3,
  museum: 0.3,
  college: 0.28,
  attraction: 0.28,
  embassy: 0.26,
  place_of_worship: 0.22,
  school: 0.2,
  hotel: 0.22,
  park: 0.2,
  marketplace: 0.22,
};
const STREET_CLASSES = new Set([
  'motorway',
  'trunk',
  'primary',
  'secondary',
  'tertiary',
  'unclassified',
  'residential',
  'living_street',
  'pedestrian',
  'service',
  'road',
  'motorway_link',
  'trunk_link',
  'primary_link',
  'secondary_link',
  'tertiary_link',
]);

export function classify(tags: Record<string, string>, isWay: boolean): OsmClass | undefined {
  const place = tags['place'];
  if (place && tags['name']) {
    const kind = place in PLACE_IMPORTANCE ? place : 'locality';
    const pop = Number(tags['population']);
    const imp =
      Number.isFinite(pop) && pop > 0
        ? Math.max(PLACE_IMPORTANCE[kind]!, cityImportance(pop, ''))
        : PLACE_IMPORTANCE[kind]!;
    return { kind, category: place, importance: imp };
  }
  if (isWay && tags['highway'] && tags['name'] && STREET_CLASSES.has(tags['highway'])) {
    return {
      kind: 'street',
      category: tags['highway'],
      importance: /^(motorway|trunk|primary)/.test(tags['highway']) ? 0.25 : 0.18,
    };
  }
  for (const key of POI_KEYS) {
    const v = tags[key];
    if (v && tags['name'] && v !== 'no') return { kind: 'poi', category: v, importance: NOTABLE[v] ?? 0.15 };
  }
  if (tags['addr:housenumber'] && (tags['addr:street'] || tags['addr:place']))
    return { kind: 'address', category: 'address', importance: 0.1 };
  if (tags['name'] && tags['building']) return { kind: 'poi', category: 'building', importance: 0.12 };
  return undefined;
}

/** Names by language: explicit name:ar / name:en first, else the plain name by its script. */
export function namesOf(
  tags: Record<string, string>,
  cls: OsmClass,
): { name: string; name_en: string | null; name_ar: string | null; alt: string[] } {
  const plain = tags['name'] ?? '';
  const ar = tags['name:ar'] ?? (hasArabic(plain) ? plain : null);
  const en = tags['name:en'] ?? (plain && !hasArabic(plain) ? plain : null);
  const street = tags['addr:street'] ?? tags['addr:place'] ?? '';
  const name = plain || (cls.kind === 'address' ? `${tags['addr:housenumber']} ${street}`.trim() : '');
  const alt = [
    tags['alt_name'],
    tags['old_name'],
    tags['short_name'],
    tags['official_name'],
    tags['int_name'],
    tags['name:fr'],
  ].filter((v): v is string => !!v);
  return { name, name_en: en, name_ar: ar, alt };
}

export function detailsOf(tags: Record<string, string>) {
  const photos = osmPhotoUrls(tags);
  return {
    phone: tags['phone'] ?? tags['contact:phone'] ?? null,
    website: tags['website'] ?? tags['contact:website'] ?? null,
    hours: tags['opening_hours'] ?? null,
    photos: photos.length ? JSON.stringify(photos) : null,
    street: tags['addr:street'] ?? tags['addr:place'] ?? null,
    housenumber: tags['addr:housenumber'] ?? null,
  };
}
