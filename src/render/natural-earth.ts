import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { feature, mesh } from 'topojson-client';
import countries from 'i18n-iso-countries';
import { clipRing } from './clip.js';
import { type Box, boxesIntersect, latToY, lngToX, ringsBox } from './mercator.js';

/**
 * Natural Earth (public domain, via world-atlas): land and country borders at three resolutions, chosen by zoom so
 * a world tile does not trace 10m coastlines and a regional tile does not show 110m shapes. Loaded lazily, projected
 * once to normalised Mercator and kept with per-part boxes for culling.
 */
export interface Shape {
  rings: Float64Array[];
  box: Box;
}

export interface CountryLabel {
  en: string;
  ar?: string;
  x: number;
  y: number;
  /** Projected area in normalised units²: bigger countries are labelled first and at lower zooms. */
  area: number;
}

export interface NaturalEarthLayer {
  land: Shape[];
  borders: Shape[];
}

export type Resolution = '110m' | '50m' | '10m';
export const resolutionFor = (z: number): Resolution => (z <= 2 ? '110m' : z <= 4 ? '50m' : '10m');

const require = createRequire(import.meta.url);
// The TopoJSON types as topojson-client's typings name them (their own package is only its typings' dependency).
type Topology = Parameters<typeof mesh>[0];
type GeometryObject = NonNullable<Parameters<typeof mesh>[1]>;
const cache = new Map<Resolution, NaturalEarthLayer>();
let labels: CountryLabel[] | undefined;

type Pos = number[];
const project = (ring: Pos[]): Float64Array => {
  const out = new Float64Array(ring.length * 2);
  ring.forEach((p, i) => {
    out[i * 2] = lngToX(p[0]!);
    out[i * 2 + 1] = latToY(p[1]!);
  });
  return out;
};

/** One shape per polygon (outer + holes), so culling works per island rather than per country. */
function polygons(geom: { type: string; coordinates: unknown }): Shape[] {
  const polys =
    geom.type === 'Polygon'
      ? [geom.coordinates as Pos[][]]
      : geom.type === 'MultiPolygon'
        ? (geom.coordinates as Pos[][][])
        : [];
  return polys.map((p) => {
    const rings = p.map(project);
    return { rings, box: ringsBox(rings) };
  });
}

// Parsed here rather than require()d: require would cache the raw topology (hundreds of MB of boxed arrays for 10m)
// for the life of the process, although only the projected shapes are kept.
const readTopo = (res: Resolution): Topology =>
  JSON.parse(readFileSync(require.resolve(`world-atlas/countries-${res}.json`), 'utf8')) as Topology;

function load(res: Resolution): NaturalEarthLayer {
  const topo = readTopo(res);
  const land = feature(topo, topo.objects.land as GeometryObject) as unknown as {
    features?: Array<{ geometry: never }>;
    geometry?: never;
  };
  const landShapes = (land.features ?? [land as { geometry: never }]).flatMap((f) => polygons(f.geometry));
  const border = mesh(topo, topo.objects.countries as GeometryObject, (a, b) => a !== b);
  const borders = (border.coordinates as Pos[][]).map((line) => {
    const rings = [project(line)];
    return { rings, box: ringsBox(rings) };
  });
  return { land: landShapes, borders };
}

export function naturalEarth(res: Resolution): NaturalEarthLayer {
  let l = cache.get(res);
  if (!l) {
    l = load(res);
    cache.set(res, l);
  }
  return l;
}

export function shapesIn(shapes: Shape[], box: Box): Shape[] {
  return shapes.filter((s) => boxesIntersect(s.box, box));
}

const pieces = new Map<string, Shape[]>();

/**
 * Land at street zooms: the 10m polygons clipped to a z6 grid cell (cached), for each cell the view touches.
 * Lower zooms use whole polygons, which are small at 110m/50m and few per tile at 10m z5.
 */
export function landIn(z: number, box: Box): Shape[] {
  const res = resolutionFor(z);
  const all = naturalEarth(res).land;
  if (z < 7) return shapesIn(all, box);
  const g = 64;
  const out: Shape[] = [];
  for (let cx = Math.floor(box[0] * g); cx <= Math.floor(box[2] * g); cx++) {
    for (let cy = Math.max(0, Math.floor(box[1] * g)); cy <= Math.min(g - 1, Math.floor(box[3] * g)); cy++) {
      const key = `${cx}/${cy}`;
      let cell = pieces.get(key);
      if (!cell) {
        const m = 0.02 / g; // overlap so cell seams never show
        const cb: Box = [cx / g - m, cy / g - m, (cx + 1) / g + m, (cy + 1) / g + m];
        cell = [];
        for (const s of shapesIn(all, cb)) {
          const rings = s.rings.map((r) => clipRing(r, cb)).filter((r): r is Float64Array => r !== undefined);
          if (rings.length) cell.push({ rings, box: ringsBox(rings) });
        }
        pieces.set(key, cell);
      }
      out.push(...cell.filter((s) => boxesIntersect(s.box, box)));
    }
  }
  return out;
}

function ringArea(r: Float64Array): number {
  let a = 0;
  for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) a += (r[j]! + r[i]!) * (r[j + 1]! - r[i + 1]!);
  return Math.abs(a / 2);
}

function inside(r: Float64Array, x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
    const xi = r[i]!,
      yi = r[i + 1]!,
      xj = r[j]!,
      yj = r[j + 1]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}

function edgeDistance(r: Float64Array, x: number, y: number): number {
  let best = Infinity;
  for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
    const ax = r[j]!,
      ay = r[j + 1]!,
      dx = r[i]! - ax,
      dy = r[i + 1]! - ay;
    const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy || 1)));
    best = Math.min(best, Math.hypot(x - ax - t * dx, y - ay - t * dy));
  }
  return best;
}

/**
 * A point well inside the largest polygon (grid search for the spot farthest from the edges), not the centroid.
 * The ring is thinned to ~400 points first: label placement needs no coastline detail and Russia has thousands.
 */
function labelPoint(full: Float64Array): [number, number] {
  const step = Math.max(1, Math.floor(full.length / 2 / 400));
  const outer =
    step === 1
      ? full
      : Float64Array.from(
          { length: Math.floor(full.length / 2 / step) * 2 },
          (_, i) => full[(i >> 1) * step * 2 + (i & 1)]!,
        );
  const [x0, y0, x1, y1] = ringsBox([outer]);
  let best: [number, number, number] = [(x0 + x1) / 2, (y0 + y1) / 2, -1];
  const n = 16;
  for (let i = 1; i < n; i++) {
    for (let j = 1; j < n; j++) {
      const x = x0 + ((x1 - x0) * i) / n;
      const y = y0 + ((y1 - y0) * j) / n;
      if (!inside(outer, x, y)) continue;
      const d = edgeDistance(outer, x, y);
      if (d > best[2]) best = [x, y, d];
    }
  }
  return [best[0], best[1]];
}

/** Country names in English (Natural Earth) and Arabic (i18n-iso-countries, keyed by the ISO numeric id). */
export function countryLabels(): CountryLabel[] {
  if (labels) return labels;
  countries.registerLocale(require('i18n-iso-countries/langs/ar.json') as countries.LocaleData);
  const topo = readTopo('50m');
  const fc = feature(topo, topo.objects.countries as GeometryObject) as unknown as {
    features: Array<{
      id?: string;
      properties: { name?: string };
      geometry: { type: string; coordinates: unknown } | null;
    }>;
  };
  labels = [];
  for (const f of fc.features) {
    if (!f.geometry || !f.properties.name) continue;
    const shapes = polygons(f.geometry);
    const largest = shapes.map((s) => ({ s, a: ringArea(s.rings[0]!) })).sort((a, b) => b.a - a.a)[0];
    if (!largest) continue;
    const [x, y] = labelPoint(largest.s.rings[0]!);
    const alpha2 = f.id ? countries.numericToAlpha2(f.id) : undefined;
    const ar = alpha2 ? countries.getName(alpha2, 'ar') : undefined;
    labels.push({ en: f.properties.name, ar, x, y, area: largest.a });
  }
  labels.sort((a, b) => b.area - a.area);
  return labels;
}
