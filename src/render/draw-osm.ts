import type { MapFeature } from './features.js';
import type { Box } from './mercator.js';
import type { View } from './view.js';
import { AREA_FILL, AREA_ORDER, COLORS, OVER_WATER, ROAD_ORDER, ROADS, WATERWAY_WIDTH, widthAt } from './style.js';

/**
 * Imported OSM layers. Where the import holds a coastline, the sea inside its coverage is redrawn from it: Natural
 * Earth's 10m coast is hundreds of metres off at street zooms and would put the harbour on land.
 */
export function drawCoast(v: View, coverage: Box | undefined, land: MapFeature[]): void {
  // Below z11 an extract is a few pixels wide and Natural Earth is accurate enough; redrawing it there would only
  // show the extract's rectangle where the two coastlines disagree.
  if (!coverage || v.z < 11) return;
  const { ctx } = v;
  ctx.save();
  ctx.beginPath();
  ctx.rect(v.px(coverage[0]), v.py(coverage[1]), (coverage[2] - coverage[0]) * v.k, (coverage[3] - coverage[1]) * v.k);
  ctx.clip();
  ctx.fillStyle = COLORS.water;
  ctx.fillRect(0, 0, v.width, v.height);
  ctx.beginPath();
  for (const f of land) v.trace(f.rings, true);
  ctx.fillStyle = COLORS.land;
  ctx.fill('evenodd');
  ctx.restore();
}

export function drawAreas(v: View, landuse: MapFeature[], water: MapFeature[]): void {
  const { ctx } = v;
  const byCls = new Map<string, MapFeature[]>();
  for (const f of landuse) byCls.set(f.cls, [...(byCls.get(f.cls) ?? []), f]);
  for (const cls of AREA_ORDER) {
    const fs = byCls.get(cls);
    if (!fs) continue;
    ctx.beginPath();
    for (const f of fs) v.trace(f.rings, true);
    ctx.fillStyle = AREA_FILL[cls]!;
    ctx.fill('nonzero'); // rings are oriented at import: overlapping areas stay filled, holes stay holes
  }
  if (water.length) {
    ctx.beginPath();
    for (const f of water) v.trace(f.rings, true);
    ctx.fillStyle = COLORS.water;
    ctx.fill('nonzero');
  }
  for (const cls of OVER_WATER) {
    const fs = byCls.get(cls);
    if (!fs) continue;
    ctx.beginPath();
    for (const f of fs) v.trace(f.rings, true);
    ctx.fillStyle = AREA_FILL[cls]!;
    ctx.fill('nonzero');
  }
}

export function drawWaterways(v: View, lines: MapFeature[]): void {
  const { ctx } = v;
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  for (const f of lines) {
    const stops = WATERWAY_WIDTH[f.cls] ?? WATERWAY_WIDTH.stream!;
    ctx.beginPath();
    v.trace(f.rings, false);
    ctx.strokeStyle = COLORS.waterLine;
    ctx.lineWidth = widthAt(stops, v.z);
    ctx.stroke();
  }
}

/** Buildings from z15 (z14 would be a grey smear); outlines only once they are big enough to read. */
export function drawBuildings(v: View, buildings: MapFeature[]): void {
  if (v.z < 15 || !buildings.length) return;
  const { ctx } = v;
  ctx.beginPath();
  for (const f of buildings) v.trace(f.rings, true, 0.5);
  ctx.fillStyle = COLORS.building;
  ctx.fill('nonzero');
  if (v.z >= 16) {
    ctx.strokeStyle = COLORS.buildingLine;
    ctx.lineWidth = v.z >= 17 ? 0.8 : 0.5;
    ctx.stroke();
  }
}

/** Per class, low to high: casing then fill, so a primary crosses a residential street cleanly. */
export function drawRoads(v: View, roads: MapFeature[]): void {
  const { ctx } = v;
  const byCls = new Map<string, MapFeature[]>();
  for (const f of roads) byCls.set(f.cls, [...(byCls.get(f.cls) ?? []), f]);
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  drawTunnels(
    v,
    roads.filter((f) => f.cls.startsWith('tunnel-')),
  );
  for (const cls of ROAD_ORDER) {
    const fs = byCls.get(cls);
    const st = ROADS[cls];
    if (!fs || !st || v.z < st.minzoom) continue;
    const w = widthAt(st.widths, v.z);
    ctx.beginPath();
    for (const f of fs) v.trace(f.rings, false);
    if (st.casingPx > 0 && w >= 1.2) {
      ctx.setLineDash([]);
      ctx.strokeStyle = st.casing;
      ctx.lineWidth = w + st.casingPx * 2;
      ctx.stroke();
    }
    ctx.strokeStyle = w < 1.2 && st.casingPx > 0 ? st.casing : st.fill;
    ctx.lineWidth = w;
    ctx.setLineDash(st.dash ?? []);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}

/** Tunnels: a faint dashed outline at the road's width, so a driver sees where the road goes underground. */
function drawTunnels(v: View, tunnels: MapFeature[]): void {
  if (!tunnels.length || v.z < 14) return;
  const { ctx } = v;
  ctx.beginPath();
  for (const f of tunnels) v.trace(f.rings, false);
  const w = widthAt(ROADS.minor!.widths, v.z);
  ctx.lineCap = 'butt';
  ctx.setLineDash([4, 3]);
  ctx.strokeStyle = 'rgba(140,130,120,0.55)';
  ctx.lineWidth = w + 1.5;
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.strokeStyle = 'rgba(250,248,244,0.85)';
  ctx.lineWidth = w;
  ctx.stroke();
  ctx.lineCap = 'round';
}
