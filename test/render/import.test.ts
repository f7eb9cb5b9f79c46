import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { renderImporter } from '../../src/import/render-importer.js';
import { labelLines } from '../../src/render/features.js';
import { orientRings } from '../../src/import/render/orient.js';
import { latToY, lngToX } from '../../src/render/mercator.js';
import { RenderStore } from '../../src/store/render/reader.js';
import { TileRenderer } from '../../src/render/tile-renderer.js';
import { COLORS } from '../../src/render/style.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

/** RGB of the pixel at lng/lat in the rendered z/scale tile that contains it. */
async function pixelAt(r: TileRenderer, lng: number, lat: number, z: number): Promise<[number, number, number]> {
  const fx = lngToX(lng) * 2 ** z;
  const fy = latToY(lat) * 2 ** z;
  const img = await loadImage(await r.renderTile(z, Math.floor(fx), Math.floor(fy), 1, 'png'));
  const c = createCanvas(256, 256);
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const d = ctx.getImageData(Math.floor((fx % 1) * 256), Math.floor((fy % 1) * 256), 1, 1).data;
  return [d[0]!, d[1]!, d[2]!];
}
const hex = (h: string) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

describe('render import and cartography checks', () => {
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-render-'));
  let store: RenderStore;
  beforeAll(async () => {
    const s = await renderImporter.run(MONACO_PBF, data, () => {}, new AbortController().signal);
    expect(s.counts.road).toBeGreaterThan(1000);
    expect(s.counts.building).toBeGreaterThan(20_000);
    expect(s.counts.land).toBe(1); // the coastline assembled into land
    store = RenderStore.inDataDir(data);
  }, 60_000);
  afterAll(() => {
    store?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('builds render.db atomically: no temp file left; an aborted import keeps the previous one', async () => {
    expect(readdirSync(data).filter((f) => f.includes('.tmp'))).toEqual([]);
    const before = statSync(join(data, 'render.db')).mtimeMs;
    const abort = new AbortController();
    abort.abort();
    await expect(renderImporter.run(MONACO_PBF, data, () => {}, abort.signal)).rejects.toThrow(/abort/);
    expect(statSync(join(data, 'render.db')).mtimeMs).toBe(before);
    expect(readdirSync(data).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('the coast comes from OSM at street zoom: Port Hercule and the open sea are water, the town is not', async () => {
    const r = new TileRenderer({ store });
    expect(await pixelAt(r, 7.42515, 43.73557, 16)).toEqual(hex(COLORS.water)); // Port Hercule
    expect(await pixelAt(r, 7.43079, 43.73402, 16)).toEqual(hex(COLORS.water)); // sea off Monte-Carlo
    expect(await pixelAt(r, 7.42221, 43.73945, 16)).not.toEqual(hex(COLORS.water)); // Boulevard Princesse Charlotte area
  });

  it('Natural Earth land pieces join without seams along their grid cells (z7 over the Levant)', async () => {
    const r = new TileRenderer();
    const img = await loadImage(await r.renderTile(7, 76, 52, 1, 'png'));
    const c = createCanvas(256, 256);
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    // The tile's top and left edges are grid-cell edges; land there must be land-coloured, not a sea-coloured seam.
    for (const [x, y] of [
      [230, 4],
      [2, 150],
      [200, 30],
      [2, 240],
    ] as const) {
      expect([...ctx.getImageData(x, y, 1, 1).data.slice(0, 3)], `${x},${y}`).toEqual(hex(COLORS.land));
    }
  });

  it('area rings are oriented for non-zero filling: outers clockwise, holes anticlockwise', () => {
    const sq = (x0: number, y0: number, s: number, cw: boolean) =>
      Float64Array.from(
        cw ? [x0, y0, x0 + s, y0, x0 + s, y0 + s, x0, y0 + s] : [x0, y0, x0, y0 + s, x0 + s, y0 + s, x0 + s, y0],
      );
    const area = (r: Float64Array) => {
      let a = 0;
      for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) a += (r[j]! - r[i]!) * (r[j + 1]! + r[i + 1]!);
      return Math.sign(a);
    };
    const [outer, hole] = orientRings([sq(0, 0, 10, false), sq(2, 2, 2, false)]);
    expect([area(outer!), area(hole!)]).toEqual([1, -1]);
    expect(orientRings([sq(0, 0, 4, true)]).map(area)).toEqual([1]);
    expect(orientRings([sq(0, 0, 4, false)]).map(area)).toEqual([1]);
  });

  it('labels are bilingual: English or local name first, Arabic second, never twice', () => {
    expect(labelLines({ name: 'Monaco', nameAr: 'موناكو' })).toEqual(['Monaco', 'موناكو']);
    expect(labelLines({ name: 'القاهرة', nameEn: 'Cairo' })).toEqual(['Cairo', 'القاهرة']);
    expect(labelLines({ name: 'عمان' })).toEqual(['عمان']);
    expect(labelLines({ name: 'Vaduz' })).toEqual(['Vaduz']);
  });
});
