/**
 * Web-Mercator in normalised world units: x and y in [0, 1], y growing south, so a tile's pixel position is a
 * multiplication in float64. Coordinates are converted to tile pixels in JS before they reach Skia, whose float32
 * maths would otherwise wobble by whole pixels at street zooms.
 */
const MAX_LAT = 85.0511287798066;

export const lngToX = (lng: number): number => (lng + 180) / 360;

export function latToY(lat: number): number {
  const l = Math.max(-MAX_LAT, Math.min(MAX_LAT, lat));
  const s = Math.sin((l * Math.PI) / 180);
  return 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI);
}

export const xToLng = (x: number): number => x * 360 - 180;
export const yToLat = (y: number): number => (Math.atan(Math.sinh(Math.PI * (1 - 2 * y))) * 180) / Math.PI;

/** [minX, minY, maxX, maxY] in normalised units. */
export type Box = [number, number, number, number];

export function tileBox(z: number, x: number, y: number): Box {
  const n = 2 ** z;
  return [x / n, y / n, (x + 1) / n, (y + 1) / n];
}

/** lng/lat bbox -> normalised box (note the y flip: north is smaller y). */
export function lngLatBox(minLng: number, minLat: number, maxLng: number, maxLat: number): Box {
  return [lngToX(minLng), latToY(maxLat), lngToX(maxLng), latToY(minLat)];
}

export const boxesIntersect = (a: Box, b: Box): boolean => a[0] <= b[2] && a[2] >= b[0] && a[1] <= b[3] && a[3] >= b[1];

/** Bounding box of flat [x0, y0, x1, y1, ...] rings. */
export function ringsBox(rings: Float64Array[]): Box {
  const b: Box = [Infinity, Infinity, -Infinity, -Infinity];
  for (const r of rings) {
    for (let i = 0; i < r.length; i += 2) {
      if (r[i]! < b[0]) b[0] = r[i]!;
      if (r[i]! > b[2]) b[2] = r[i]!;
      if (r[i + 1]! < b[1]) b[1] = r[i + 1]!;
      if (r[i + 1]! > b[3]) b[3] = r[i + 1]!;
    }
  }
  return b;
}
