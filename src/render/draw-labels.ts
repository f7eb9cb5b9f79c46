import { labelLines, type MapFeature } from './features.js';
import type { LabelLayer } from './labels.js';
import type { View } from './view.js';
import { COLORS, ROADS, widthAt } from './style.js';

const PLACE_STYLE: Record<string, { size: number; weight: 400 | 600; dotUntil: number; color?: string }> = {
  city: { size: 16, weight: 600, dotUntil: 11 },
  town: { size: 14, weight: 600, dotUntil: 13 },
  village: { size: 12.5, weight: 600, dotUntil: 14 },
  suburb: { size: 12, weight: 600, dotUntil: 0, color: COLORS.textMuted },
  quarter: { size: 11.5, weight: 400, dotUntil: 0, color: COLORS.textMuted },
  neighbourhood: { size: 11, weight: 400, dotUntil: 0, color: COLORS.textMuted },
  hamlet: { size: 11, weight: 400, dotUntil: 16 },
  islet: { size: 11, weight: 400, dotUntil: 0, color: COLORS.waterText },
};

/** Place points (imported place nodes and gazetteer labels), most important first. */
export function drawPlaceLabels(v: View, labels: LabelLayer, places: MapFeature[]): void {
  const sorted = [...places].sort((a, b) => a.rank - b.rank || a.id - b.id);
  for (const p of sorted) {
    const st = PLACE_STYLE[p.cls] ?? PLACE_STYLE.neighbourhood!;
    const lines = labelLines(p);
    if (!lines.length) continue;
    const r = p.rings[0]!;
    const dot = v.z <= st.dotUntil ? '#444444' : undefined;
    labels.place({
      lines,
      x: v.px(r[0]!),
      y: v.py(r[1]!),
      size: st.size,
      weight: st.weight,
      color: st.color,
      dot,
      pad: 5,
    });
  }
}

/** Points of interest from z16: small italic names under a dot, so they never compete with streets. */
export function drawPoiLabels(v: View, labels: LabelLayer, pois: MapFeature[]): void {
  if (v.z < 16) return;
  const sorted = [...pois].sort((a, b) => a.rank - b.rank || a.id - b.id);
  for (const p of sorted) {
    const lines = labelLines(p);
    if (!lines.length) continue;
    const r = p.rings[0]!;
    labels.place({
      lines,
      x: v.px(r[0]!),
      y: v.py(r[1]!),
      size: 10.5,
      italic: true,
      color: COLORS.poi,
      dot: COLORS.poi,
      pad: 2,
    });
  }
}

interface Run {
  x: number;
  y: number;
  angle: number;
  len: number;
}

/**
 * The longest nearly straight stretch of a line (direction within ~17° of where the stretch began), in view pixels.
 * Road names are set straight along it instead of glyph by glyph along the curve: that keeps Arabic shaped as a
 * whole word, which per-glyph placement would break.
 */
function straightestRun(r: Float64Array, v: View): Run | undefined {
  const n = r.length / 2;
  let best: Run | undefined;
  for (let i = 0; i < n - 1;) {
    const x0 = v.px(r[i * 2]!),
      y0 = v.py(r[i * 2 + 1]!);
    const a0 = Math.atan2(v.py(r[i * 2 + 3]!) - y0, v.px(r[i * 2 + 2]!) - x0);
    let j = i + 1;
    while (j < n - 1) {
      const a = Math.atan2(v.py(r[j * 2 + 3]!) - v.py(r[j * 2 + 1]!), v.px(r[j * 2 + 2]!) - v.px(r[j * 2]!));
      let d = Math.abs(a - a0);
      if (d > Math.PI) d = 2 * Math.PI - d;
      if (d > 0.3) break;
      j++;
    }
    const x1 = v.px(r[j * 2]!),
      y1 = v.py(r[j * 2 + 1]!);
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (!best || len > best.len) {
      let angle = Math.atan2(y1 - y0, x1 - x0);
      if (angle > Math.PI / 2) angle -= Math.PI;
      if (angle < -Math.PI / 2) angle += Math.PI;
      best = { x: (x0 + x1) / 2, y: (y0 + y1) / 2, angle, len };
    }
    i = j;
  }
  return best;
}

const ROAD_LABEL_MINZOOM: Record<string, number> = {
  motorway: 13,
  trunk: 13,
  primary: 14,
  secondary: 14,
  tertiary: 15,
  minor: 15,
  pedestrian: 16,
  service: 17,
};

/** Street names set along the road, larger roads first; a name is skipped where it does not fit its stretch. */
export function drawRoadLabels(v: View, labels: LabelLayer, roads: MapFeature[]): void {
  const named = roads
    .filter((f) => (f.name || f.nameEn || f.nameAr) && v.z >= (ROAD_LABEL_MINZOOM[f.cls] ?? 99))
    .sort((a, b) => a.rank - b.rank || a.id - b.id);
  const seen = new Set<string>();
  for (const f of named) {
    const all = labelLines(f);
    const lines = v.z >= 16 ? all : all.slice(0, 1);
    const key = lines.join('|');
    const size = v.z >= 17 ? 12 : 11;
    const textW = labels.measure(lines, size);
    const run = straightestRun(f.rings[0]!, v);
    if (!run || run.len < textW + 16) continue;
    const roadW = widthAt(ROADS[f.cls]?.widths ?? [[0, 1]], v.z);
    // A street often comes as several ways: one label per name per tile area is enough.
    if (seen.has(key) && run.len < textW * 3) continue;
    const ok = labels.place({
      lines,
      x: run.x,
      y: run.y,
      angle: run.angle,
      size,
      color: roadW > size * 1.2 ? '#333333' : COLORS.textMuted,
      pad: 8,
    });
    if (ok) seen.add(key);
  }
}
