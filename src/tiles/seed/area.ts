import { readFileSync } from 'node:fs';
import { geomEach, type AllGeoJSON } from '@turf/turf';
import { type Box, boxesIntersect, latToY, lngLatBox, lngToX, ringsBox, tileBox } from '../../render/mercator.js';

/**
 * The area to seed: bounding boxes and/or GeoJSON polygons, in normalised Mercator. `touches` decides whether a
 * tile (and so its whole subtree) is worth visiting; it is exact for boxes and for polygons (edge crossing or
 * containment), so a thin diagonal polygon does not pull in its whole bounding box at z16.
 */
export class SeedArea {
  constructor(
    readonly boxes: Box[],
    readonly polygons: Array<{ rings: Float64Array[]; box: Box }>,
  ) {
    if (!boxes.length && !polygons.length) throw new Error('no area: give --bbox or --polygon');
  }

  static parseBbox(s: string): Box {
    const n = s.split(',').map((v) => Number(v.trim()));
    if (n.length !== 4 || n.some((v) => !Number.isFinite(v)))
      throw new Error(`--bbox needs minLng,minLat,maxLng,maxLat, got "${s}"`);
    const [minLng, minLat, maxLng, maxLat] = n as [number, number, number, number];
    if (minLng >= maxLng || minLat >= maxLat || minLng < -180 || maxLng > 180 || minLat < -90 || maxLat > 90) {
      throw new Error(`--bbox "${s}": expected minLng < maxLng and minLat < maxLat within the world`);
    }
    return lngLatBox(minLng, minLat, maxLng, maxLat);
  }

  /** Polygons and MultiPolygons from a GeoJSON file (Feature, FeatureCollection or bare geometry). */
  static parsePolygonFile(file: string): Array<{ rings: Float64Array[]; box: Box }> {
    return SeedArea.parsePolygonText(readFileSync(file, 'utf8'), file);
  }

  /** The same from the GeoJSON text itself (a seed job keeps it, so `--resume` does not need the file). */
  static parsePolygonText(text: string, file: string): Array<{ rings: Float64Array[]; box: Box }> {
    const gj = JSON.parse(text) as AllGeoJSON;
    // turf walks every geometry of a Feature, a FeatureCollection or a GeometryCollection, nested or bare
    const polys: number[][][][] = [];
    geomEach(gj, (g) => {
      if (g?.type === 'Polygon') polys.push(g.coordinates);
      else if (g?.type === 'MultiPolygon') polys.push(...g.coordinates);
    });
    if (!polys.length) throw new Error(`--polygon ${file}: no Polygon or MultiPolygon in it`);
    return polys.map((p) => {
      const rings = p.map((ring) => Float64Array.from(ring.flatMap(([lng, lat]) => [lngToX(lng!), latToY(lat!)])));
      return { rings, box: ringsBox(rings) };
    });
  }

  touches(z: number, x: number, y: number): boolean {
    const t = tileBox(z, x, y);
    if (this.boxes.some((b) => boxesIntersect(b, t))) return true;
    return this.polygons.some((p) => boxesIntersect(p.box, t) && polygonTouchesBox(p.rings, t));
  }

  /** Union of all parts, for MBTiles `bounds` metadata. */
  get box(): Box {
    const all = [...this.boxes, ...this.polygons.map((p) => p.box)];
    return [
      Math.min(...all.map((b) => b[0])),
      Math.min(...all.map((b) => b[1])),
      Math.max(...all.map((b) => b[2])),
      Math.max(...all.map((b) => b[3])),
    ];
  }
}

function pointInRings(rings: Float64Array[], x: number, y: number): boolean {
  let c = false;
  for (const r of rings) {
    for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
      const xi = r[i]!,
        yi = r[i + 1]!,
        xj = r[j]!,
        yj = r[j + 1]!;
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
    }
  }
  return c;
}

/** Liang-Barsky: does segment a-b cross the box? */
function segmentHitsBox(ax: number, ay: number, bx: number, by: number, b: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = bx - ax;
  const dy = by - ay;
  const checks: Array<[number, number]> = [
    [-dx, ax - b[0]],
    [dx, b[2] - ax],
    [-dy, ay - b[1]],
    [dy, b[3] - ay],
  ];
  for (const [p, q] of checks) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const r = q / p;
      if (p < 0) t0 = Math.max(t0, r);
      else t1 = Math.min(t1, r);
      if (t0 > t1) return false;
    }
  }
  return true;
}

function polygonTouchesBox(rings: Float64Array[], b: Box): boolean {
  if (pointInRings(rings, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2)) return true;
  for (const r of rings) {
    for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
      if (segmentHitsBox(r[j]!, r[j + 1]!, r[i]!, r[i + 1]!, b)) return true;
    }
  }
  return false;
}
