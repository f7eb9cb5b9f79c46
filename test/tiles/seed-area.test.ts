import { describe, expect, it } from 'vitest';
import { SeedArea } from '../../src/tiles/seed/area.js';
import { lngToX, latToY } from '../../src/render/mercator.js';

const square = (lng: number, lat: number, d: number) => [
  [
    [lng, lat],
    [lng + d, lat],
    [lng + d, lat + d],
    [lng, lat + d],
    [lng, lat],
  ],
];

describe('seed area from GeoJSON polygons', () => {
  it('takes every Polygon and MultiPolygon of a bare geometry, a Feature, a FeatureCollection or a GeometryCollection', () => {
    const text = JSON.stringify({
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: square(35.9, 31.9, 0.1) } },
        { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [0, 0] } },
        {
          type: 'Feature',
          properties: {},
          geometry: {
            type: 'GeometryCollection',
            geometries: [
              { type: 'MultiPolygon', coordinates: [square(51.5, 25.2, 0.1), square(46.6, 24.6, 0.1)] },
              {
                type: 'LineString',
                coordinates: [
                  [0, 0],
                  [1, 1],
                ],
              },
            ],
          },
        },
      ],
    });
    const polys = SeedArea.parsePolygonText(text, 'area.geojson');
    expect(polys).toHaveLength(3);
    expect(polys[0]!.rings[0]![0]).toBeCloseTo(lngToX(35.9), 12);
    expect(polys[0]!.rings[0]![1]).toBeCloseTo(latToY(31.9), 12);
    const area = new SeedArea([], polys);
    // Amman's square and Doha's are in; a tile far away is not
    expect(area.touches(12, 2457, 1664)).toBe(true);
    expect(area.touches(12, 0, 0)).toBe(false);
  });

  it('says so when the file has no polygon', () => {
    const text = JSON.stringify({ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [1, 2] } });
    expect(() => SeedArea.parsePolygonText(text, 'points.geojson')).toThrow(/no Polygon or MultiPolygon/);
  });
});
