import type { Layer } from '../../render/features.js';

/** How an OSM object is drawn: layer, style class, first zoom, label rank. */
export interface Classed {
  layer: Layer;
  cls: string;
  minzoom: number;
  rank: number;
}

type Tags = Record<string, string>;

const ROAD: Record<string, [cls: string, minzoom: number, rank: number]> = {
  motorway: ['motorway', 5, 1],
  motorway_link: ['motorway', 10, 1],
  trunk: ['trunk', 6, 2],
  trunk_link: ['trunk', 10, 2],
  primary: ['primary', 8, 3],
  primary_link: ['primary', 11, 3],
  secondary: ['secondary', 10, 4],
  secondary_link: ['secondary', 12, 4],
  tertiary: ['tertiary', 11, 5],
  tertiary_link: ['tertiary', 13, 5],
  residential: ['minor', 13, 6],
  unclassified: ['minor', 13, 6],
  living_street: ['minor', 13, 6],
  road: ['minor', 13, 6],
  service: ['service', 14, 7],
  pedestrian: ['pedestrian', 14, 7],
  footway: ['path', 15, 8],
  path: ['path', 15, 8],
  steps: ['path', 15, 8],
  cycleway: ['path', 15, 8],
  track: ['path', 15, 8],
  bridleway: ['path', 15, 8],
};

/** Area classes in priority order: the first matching tag wins. */
const AREAS: Array<[key: string, values: string[] | '*', cls: string, minzoom?: number]> = [
  ['natural', ['water'], 'water'],
  ['water', '*', 'water'],
  ['waterway', ['riverbank', 'dock'], 'water'],
  ['landuse', ['reservoir', 'basin'], 'water'],
  ['leisure', ['swimming_pool'], 'water', 15],
  ['amenity', ['swimming_pool'], 'water', 15],
  ['leisure', ['park', 'garden', 'playground', 'common', 'recreation_ground', 'dog_park', 'nature_reserve'], 'park'],
  ['landuse', ['village_green', 'recreation_ground'], 'park'],
  ['landuse', ['forest'], 'forest'],
  ['natural', ['wood'], 'forest'],
  ['landuse', ['grass', 'meadow'], 'grass'],
  ['natural', ['grassland', 'scrub', 'heath'], 'grass'],
  ['leisure', ['pitch', 'stadium', 'sports_centre', 'golf_course', 'track'], 'sport'],
  ['landuse', ['residential'], 'residential'],
  ['landuse', ['commercial', 'retail'], 'commercial'],
  ['landuse', ['industrial', 'railway', 'construction', 'brownfield', 'port'], 'industrial'],
  ['landuse', ['cemetery'], 'cemetery'],
  ['amenity', ['grave_yard'], 'cemetery'],
  ['natural', ['beach', 'sand'], 'sand'],
  ['amenity', ['parking'], 'parking', 14],
  ['landuse', ['farmland', 'orchard', 'vineyard', 'allotments', 'farmyard'], 'farmland'],
  ['highway', ['pedestrian', 'footway'], 'pedestrian', 14],
  ['man_made', ['pier', 'breakwater', 'groyne'], 'pier', 13],
];

const PLACE: Record<string, [minzoom: number, rank: number]> = {
  city: [8, 1],
  town: [10, 2],
  village: [12, 3],
  suburb: [13, 4],
  quarter: [14, 5],
  neighbourhood: [14, 6],
  hamlet: [14, 6],
  islet: [14, 7],
};

const POI_KEYS: Array<[key: string, rank: number]> = [
  ['tourism', 1],
  ['historic', 2],
  ['amenity', 3],
  ['leisure', 4],
  ['shop', 5],
  ['office', 6],
];
const BORING_AMENITY = new Set([
  'parking',
  'bench',
  'waste_basket',
  'bicycle_parking',
  'toilets',
  'recycling',
  'vending_machine',
  'parking_entrance',
]);

export function classifyLine(t: Tags): Classed | undefined {
  const hw = t.highway && ROAD[t.highway];
  if (hw && t.area !== 'yes') {
    // Tunnels keep their class under a prefix: drawn faint and dashed below the streets, never labelled.
    const tunnel = t.tunnel === 'yes' || t.tunnel === 'building_passage' || t.covered === 'yes';
    return {
      layer: 'road',
      cls: tunnel ? `tunnel-${hw[0]}` : hw[0],
      minzoom: Math.max(hw[1], tunnel ? 13 : 0),
      rank: hw[2],
    };
  }
  if (t.railway && ['rail', 'light_rail', 'narrow_gauge'].includes(t.railway) && t.tunnel !== 'yes') {
    return { layer: 'road', cls: 'rail', minzoom: 12, rank: 9 };
  }
  if (t.man_made && ['pier', 'breakwater', 'groyne'].includes(t.man_made))
    return { layer: 'road', cls: 'pier', minzoom: 13, rank: 9 };
  if (t.waterway && ['river', 'canal', 'stream'].includes(t.waterway) && t.tunnel !== 'culvert') {
    return { layer: 'waterway', cls: t.waterway, minzoom: t.waterway === 'stream' ? 13 : 8, rank: 9 };
  }
  return undefined;
}

export function classifyArea(t: Tags): Classed | undefined {
  if (t.building && t.building !== 'no') return { layer: 'building', cls: 'building', minzoom: 15, rank: 9 };
  for (const [k, vals, cls, minzoom] of AREAS) {
    const v = t[k];
    if (v !== undefined && (vals === '*' || vals.includes(v))) {
      return { layer: cls === 'water' ? 'water' : 'landuse', cls, minzoom: minzoom ?? 10, rank: 9 };
    }
  }
  return undefined;
}

export function classifyPoint(t: Tags): Classed | undefined {
  const p = t.place && PLACE[t.place];
  if (p && t.name) return { layer: 'place', cls: t.place!, minzoom: p[0], rank: p[1] };
  if (!t.name) return undefined;
  for (const [k, rank] of POI_KEYS) {
    const v = t[k];
    if (v && !(k === 'amenity' && BORING_AMENITY.has(v))) return { layer: 'poi', cls: `${k}=${v}`, minzoom: 16, rank };
  }
  return undefined;
}

/** A closed way is an area unless its tags say it is a line (roundabouts, closed footpaths, barriers). */
export const isAreaWay = (t: Tags, closed: boolean): boolean =>
  closed && (t.area === 'yes' || (!t.highway && !t.barrier && !t.waterway) || (t.area !== 'no' && !!t.building));
