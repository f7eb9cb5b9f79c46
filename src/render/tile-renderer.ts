import { createCanvas } from '@napi-rs/canvas';
import type { TileFormat } from '../tiles/types.js';
import { drawBorders, drawCountryLabels, drawLand } from './draw-basemap.js';
import { drawPlaceLabels, drawPoiLabels, drawRoadLabels } from './draw-labels.js';
import { drawAreas, drawBuildings, drawCoast, drawRoads, drawWaterways } from './draw-osm.js';
import type { Layer, MapFeature } from './features.js';
import { ensureFonts } from './fonts.js';
import { LabelLayer } from './labels.js';
import { latToY, lngToX, xToLng, yToLat } from './mercator.js';
import { noPlaceLabels, type PlaceLabelSource } from './place-labels.js';
import { encodeCanvas } from './tile-image.js';
import type { RenderStore } from '../store/render/reader.js';
import { View } from './view.js';

/** How far beyond the visible area features and labels are considered, in CSS px: the widest label fits in it. */
const LABEL_BUFFER_PX = 256;
const GEOMETRY_BUFFER_PX = 32;

export interface RendererDeps {
  /** Imported OSM features (render.db); absent before the first import. */
  store?: RenderStore;
  places?: PlaceLabelSource;
}

/**
 * The built-in cartography: Natural Earth land, sea and borders everywhere, imported OSM detail where it exists,
 * labels in English and Arabic. Draws at the device pixel ratio so @2x/@3x tiles are sharper, not upscaled.
 */
export class TileRenderer {
  constructor(private readonly deps: RendererDeps = {}) {
    ensureFonts();
  }

  /** Draws the normalised-world window of `v` onto its context (already scaled by the pixel ratio). */
  draw(v: View): void {
    // Geometry only where it can touch the view (plus the widest road); named features from further out for labels.
    const byLayer = this.features(v, GEOMETRY_BUFFER_PX, false);
    const named = this.features(v, LABEL_BUFFER_PX, true);
    const get = (l: Layer) => byLayer.get(l) ?? [];
    drawLand(v);
    drawCoast(v, this.deps.store?.coverage, get('land'));
    drawAreas(v, get('landuse'), get('water'));
    drawWaterways(v, get('waterway'));
    drawBuildings(v, get('building'));
    drawRoads(v, get('road'));
    drawBorders(v);
    const labels = new LabelLayer(v.ctx);
    drawCountryLabels(v, labels);
    drawPlaceLabels(v, labels, [...(named.get('place') ?? []), ...this.gazetteer(v)]);
    drawRoadLabels(v, labels, named.get('road') ?? []);
    drawPoiLabels(v, labels, named.get('poi') ?? []);
  }

  private features(v: View, bufferPx: number, labelsOnly: boolean): Map<Layer, MapFeature[]> {
    const out = new Map<Layer, MapFeature[]>();
    const store = this.deps.store;
    if (!store || v.z < 5) return out;
    for (const f of store.query(v.box(bufferPx), v.z, labelsOnly)) {
      let list = out.get(f.layer);
      if (!list) out.set(f.layer, (list = []));
      list.push(f);
    }
    return out;
  }

  private gazetteer(v: View): MapFeature[] {
    const src = this.deps.places ?? noPlaceLabels;
    const b = v.box(LABEL_BUFFER_PX);
    return src.labelsFor([xToLng(b[0]), yToLat(b[3]), xToLng(b[2]), yToLat(b[1])], v.z).map((p) => {
      const x = lngToX(p.lng);
      const y = latToY(p.lat);
      return {
        id: -p.id,
        layer: 'place' as const,
        cls: p.kind,
        minzoom: 0,
        rank: p.rank,
        name: p.name,
        nameEn: p.nameEn,
        nameAr: p.nameAr,
        rings: [Float64Array.of(x, y)],
        box: [x, y, x, y],
      };
    });
  }

  /** One XYZ tile, 256 CSS px at `scale` device pixels each, encoded as `format` (gif is served as PNG bytes). */
  async renderTile(z: number, x: number, y: number, scale: number, format: TileFormat): Promise<Buffer> {
    const size = 256 * scale;
    const canvas = createCanvas(size, size);
    const ctx = canvas.getContext('2d');
    ctx.scale(scale, scale);
    const n = 2 ** z;
    this.draw(new View(ctx, z, x / n, y / n, 256, 256));
    return encodeCanvas(canvas, format);
  }
}
