import type { View } from './view.js';
import { countryLabels, landIn, naturalEarth, resolutionFor, shapesIn } from './natural-earth.js';
import type { LabelLayer } from './labels.js';
import { COLORS } from './style.js';

/** Sea background and Natural Earth land, at the resolution that suits the zoom. */
export function drawLand(v: View): void {
  const { ctx } = v;
  ctx.fillStyle = COLORS.water;
  ctx.fillRect(0, 0, v.width, v.height);
  const land = landIn(v.z, v.box(2));
  ctx.fillStyle = COLORS.land;
  // One fill per piece: neighbouring grid pieces overlap a little, and even-odd over a shared path would punch
  // that overlap out again as a sea-coloured seam.
  for (const s of land) {
    ctx.beginPath();
    v.trace(s.rings, true);
    ctx.fill('evenodd');
  }
}

/** Country borders: a soft white casing under a muted purple line that thickens with zoom. */
export function drawBorders(v: View): void {
  const { ctx } = v;
  const ne = naturalEarth(resolutionFor(v.z));
  const lines = shapesIn(ne.borders, v.box(4));
  if (!lines.length) return;
  ctx.beginPath();
  for (const s of lines) v.trace(s.rings, false);
  const w = v.z <= 2 ? 0.6 : v.z <= 5 ? 0.9 : v.z <= 9 ? 1.3 : 1.8;
  ctx.lineJoin = 'round';
  ctx.lineCap = 'round';
  if (v.z >= 5) {
    ctx.strokeStyle = COLORS.borderCasing;
    ctx.lineWidth = w + 3;
    ctx.setLineDash([]);
    ctx.stroke();
  }
  ctx.strokeStyle = COLORS.border;
  ctx.lineWidth = w;
  ctx.setLineDash(v.z >= 6 ? [6, 3] : []);
  ctx.stroke();
  ctx.setLineDash([]);
}

/** Country names from z2 to z7; the biggest countries first, small ones only once they have room. */
export function drawCountryLabels(v: View, labels: LabelLayer): void {
  if (v.z < 2 || v.z > 7) return;
  const box = v.box(200);
  const minArea = 2e-4 / 4 ** (v.z - 2);
  for (const c of countryLabels()) {
    if (c.area < minArea) break;
    if (c.x < box[0] || c.x > box[2] || c.y < box[1] || c.y > box[3]) continue;
    const size = v.z <= 3 ? 11 : v.z <= 5 ? 12.5 : 14;
    labels.place({
      lines: c.ar && v.z >= 3 ? [c.en, c.ar] : [c.en],
      x: v.px(c.x),
      y: v.py(c.y),
      size,
      weight: 600,
      color: '#5b4a70',
      pad: 6,
    });
  }
}
