/**
 * The cartography in one place: a calm, high-contrast daytime palette for driving (roads read first, area fills stay
 * quiet) and road widths per class and zoom in CSS pixels, interpolated between stops like a GL style would.
 */
export const COLORS = {
  water: '#aad3e6',
  waterLine: '#8cbfd9',
  land: '#f2efe9',
  border: '#9b8fb0',
  borderCasing: 'rgba(255,255,255,0.7)',
  building: '#d9d0c6',
  buildingLine: '#bcb0a2',
  text: '#2b2b2b',
  textMuted: '#5a5a5a',
  waterText: '#3d6f91',
  halo: 'rgba(255,255,255,0.92)',
  poi: '#8a5a44',
} as const;

export const AREA_FILL: Record<string, string> = {
  park: '#cdebb0',
  forest: '#add19e',
  grass: '#d6ecc0',
  sport: '#c4e6c7',
  residential: '#ebe7e1',
  commercial: '#f1e4e0',
  industrial: '#ebdbe8',
  cemetery: '#c9dcc0',
  sand: '#f5e9c6',
  parking: '#e6e3df',
  farmland: '#eef0d5',
  water: '#aad3e6',
  pedestrian: '#eeebe6',
  pier: '#f2efe9',
};

/** Draw order of area classes: big soft areas first so parks and water inside them stay visible. */
export const AREA_ORDER = [
  'residential',
  'commercial',
  'industrial',
  'farmland',
  'forest',
  'grass',
  'park',
  'cemetery',
  'sport',
  'sand',
  'parking',
  'pedestrian',
];

/** Areas drawn after water: structures standing in it. */
export const OVER_WATER = ['pier'];

export interface RoadStyle {
  fill: string;
  casing: string;
  /** [zoom, width px] stops for the fill; the casing adds `casingPx` on each side. */
  widths: Array<[number, number]>;
  casingPx: number;
  minzoom: number;
  dash?: number[];
}

export const ROADS: Record<string, RoadStyle> = {
  motorway: {
    fill: '#f4a870',
    casing: '#c46a32',
    widths: [
      [5, 0.8],
      [9, 1.5],
      [12, 2.6],
      [14, 4.2],
      [16, 9],
      [18, 24],
    ],
    casingPx: 1,
    minzoom: 5,
  },
  trunk: {
    fill: '#f9c38f',
    casing: '#c7834a',
    widths: [
      [6, 0.7],
      [9, 1.3],
      [12, 2.4],
      [14, 3.8],
      [16, 8.5],
      [18, 22],
    ],
    casingPx: 1,
    minzoom: 6,
  },
  primary: {
    fill: '#fcd88f',
    casing: '#c49a4c',
    widths: [
      [8, 0.6],
      [10, 1.1],
      [12, 2],
      [14, 3.4],
      [16, 8],
      [18, 20],
    ],
    casingPx: 1,
    minzoom: 8,
  },
  secondary: {
    fill: '#fdf0b0',
    casing: '#bda764',
    widths: [
      [10, 0.8],
      [12, 1.6],
      [14, 3],
      [16, 7],
      [18, 18],
    ],
    casingPx: 1,
    minzoom: 10,
  },
  tertiary: {
    fill: '#ffffff',
    casing: '#b9b0a2',
    widths: [
      [11, 0.7],
      [12, 1.2],
      [14, 2.6],
      [16, 6.5],
      [18, 16],
    ],
    casingPx: 0.9,
    minzoom: 11,
  },
  minor: {
    fill: '#ffffff',
    casing: '#c3bbb0',
    widths: [
      [13, 0.7],
      [14, 1.6],
      [16, 5],
      [18, 13],
    ],
    casingPx: 0.8,
    minzoom: 13,
  },
  service: {
    fill: '#ffffff',
    casing: '#cbc4ba',
    widths: [
      [14, 0.7],
      [16, 2.6],
      [18, 7],
    ],
    casingPx: 0.6,
    minzoom: 14,
  },
  pedestrian: {
    fill: '#f3f1ee',
    casing: '#c9c2b8',
    widths: [
      [14, 0.8],
      [16, 3.5],
      [18, 9],
    ],
    casingPx: 0.6,
    minzoom: 14,
  },
  path: {
    fill: '#e98a7c',
    casing: 'rgba(255,255,255,0.6)',
    widths: [
      [15, 0.7],
      [16, 1],
      [18, 2],
    ],
    casingPx: 0.5,
    minzoom: 15,
    dash: [3, 2],
  },
  pier: {
    fill: '#f2efe9',
    casing: 'rgba(0,0,0,0)',
    widths: [
      [13, 1],
      [16, 4],
      [18, 12],
    ],
    casingPx: 0,
    minzoom: 13,
  },
  rail: {
    fill: '#9a9a9a',
    casing: 'rgba(255,255,255,0)',
    widths: [
      [12, 0.8],
      [16, 1.6],
      [18, 2.5],
    ],
    casingPx: 0,
    minzoom: 12,
    dash: [6, 3],
  },
};

/** Lower first; bridges and tunnels are not split out (the render store keeps no layer tags). */
export const ROAD_ORDER = [
  'pier',
  'path',
  'rail',
  'service',
  'pedestrian',
  'minor',
  'tertiary',
  'secondary',
  'primary',
  'trunk',
  'motorway',
];

export function widthAt(stops: Array<[number, number]>, z: number): number {
  if (z <= stops[0]![0]) return stops[0]![1];
  for (let i = 1; i < stops.length; i++) {
    const [z1, w1] = stops[i]!;
    const [z0, w0] = stops[i - 1]!;
    if (z <= z1) return w0 * Math.pow(w1 / w0, (z - z0) / (z1 - z0));
  }
  const [zl, wl] = stops[stops.length - 1]!;
  return wl * 2 ** (z - zl);
}

export const WATERWAY_WIDTH: Record<string, Array<[number, number]>> = {
  river: [
    [8, 0.8],
    [12, 2],
    [16, 8],
    [18, 20],
  ],
  canal: [
    [10, 0.8],
    [14, 3],
    [18, 14],
  ],
  stream: [
    [13, 0.6],
    [16, 1.6],
    [18, 3],
  ],
};
