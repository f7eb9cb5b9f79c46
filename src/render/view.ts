import type { SKRSContext2D } from '@napi-rs/canvas';
import type { Box } from './mercator.js';

/**
 * One drawing target: a tile (or a static map) as a window onto the normalised world at a zoom. `k` is CSS pixels per
 * world unit; the canvas is already scaled by the device pixel ratio, so @2x/@3x draw finer, never upscale.
 */
export class View {
  readonly k: number;
  constructor(
    readonly ctx: SKRSContext2D,
    readonly z: number,
    /** Top-left corner in normalised units. */
    readonly ox: number,
    readonly oy: number,
    /** Size in CSS pixels. */
    readonly width: number,
    readonly height: number,
  ) {
    this.k = 256 * 2 ** z;
  }

  /** The visible area, grown by `bufferPx` CSS pixels, in normalised units. */
  box(bufferPx = 0): Box {
    const d = bufferPx / this.k;
    return [this.ox - d, this.oy - d, this.ox + this.width / this.k + d, this.oy + this.height / this.k + d];
  }

  px(x: number): number {
    return (x - this.ox) * this.k;
  }

  py(y: number): number {
    return (y - this.oy) * this.k;
  }

  /**
   * Adds flat rings to the current path in pixel space, dropping points closer than `minStep` pixels to the last
   * kept one: Natural Earth 10m at low zoom or a detailed coastline would otherwise send thousands of sub-pixel
   * segments to Skia.
   */
  trace(rings: Float64Array[], close: boolean, minStep = 0.35): void {
    const ctx = this.ctx;
    const m2 = minStep * minStep;
    for (const r of rings) {
      if (r.length < 4) continue;
      let lx = this.px(r[0]!);
      let ly = this.py(r[1]!);
      ctx.moveTo(lx, ly);
      const last = r.length - 2;
      for (let i = 2; i < r.length; i += 2) {
        const x = this.px(r[i]!);
        const y = this.py(r[i + 1]!);
        const dx = x - lx;
        const dy = y - ly;
        if (i !== last && dx * dx + dy * dy < m2) continue;
        ctx.lineTo(x, y);
        lx = x;
        ly = y;
      }
      if (close) ctx.closePath();
    }
  }
}
