import { createCanvas, loadImage } from '@napi-rs/canvas';
import { COLORS } from './style.js';

/** Everything a static map is drawn from, all in output pixels: the basemap tiles and the path. */
export interface StaticMapSpec {
  w: number;
  h: number;
  /** Basemap tiles (encoded images, 256 px) and where each one's top-left corner goes. */
  tiles: Array<{ bytes: Uint8Array; x: number; y: number }>;
  px: number[];
  py: number[];
}

/**
 * Draws a static map: the basemap tiles on the land colour, then the path anti-aliased with a white casing and
 * start/end markers, encoded as PNG. Decoding twenty-odd tiles and encoding a 1024x1024 PNG is tens of milliseconds
 * of CPU, so the server runs this in a static-map thread (staticmap-worker.ts), never on its event loop.
 */
export async function composeStaticMap(spec: StaticMapSpec): Promise<Buffer> {
  const { w, h, px, py } = spec;
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = COLORS.land;
  ctx.fillRect(0, 0, w, h);
  for (const t of spec.tiles) ctx.drawImage(await loadImage(t.bytes), t.x, t.y, 256, 256);
  ctx.lineJoin = 'round';
  ctx.lineCap = 'round';
  ctx.beginPath();
  px.forEach((x, i) => (i ? ctx.lineTo(x, py[i]!) : ctx.moveTo(x, py[i]!)));
  ctx.strokeStyle = 'rgba(255,255,255,0.95)';
  ctx.lineWidth = 8;
  ctx.stroke();
  ctx.strokeStyle = '#1a66d9';
  ctx.lineWidth = 5;
  ctx.stroke();
  marker(ctx, px[0]!, py[0]!, '#1e9e4a');
  marker(ctx, px[px.length - 1]!, py[py.length - 1]!, '#d93025');
  return canvas.encode('png');
}

function marker(
  ctx: ReturnType<ReturnType<typeof createCanvas>['getContext']>,
  x: number,
  y: number,
  color: string,
): void {
  ctx.beginPath();
  ctx.arc(x, y, 7.5, 0, Math.PI * 2);
  ctx.fillStyle = color;
  ctx.fill();
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = '#ffffff';
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(x, y, 2.5, 0, Math.PI * 2);
  ctx.fillStyle = '#ffffff';
  ctx.fill();
}
