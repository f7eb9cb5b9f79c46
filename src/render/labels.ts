import type { SKRSContext2D } from '@napi-rs/canvas';
import { LABEL_FONT } from './fonts.js';
import { COLORS } from './style.js';

/**
 * Label placement with collision. Candidates arrive in priority order from an area larger than the tile (the
 * caller's buffer), and the decision depends only on that ordered list, so neighbouring tiles agree about a label
 * that straddles their edge and each draws its own part of it: labels are never cut off at tile seams.
 */
export interface LabelSpec {
  lines: string[];
  /** Anchor in view CSS pixels. */
  x: number;
  y: number;
  size: number;
  weight?: 400 | 600;
  italic?: boolean;
  color?: string;
  /** Radians; text is kept upright by the caller. */
  angle?: number;
  /** Draw a dot at the anchor and put the text below it (cities, POIs). */
  dot?: string;
  /** Extra spacing around the box in px. */
  pad?: number;
}

type Rect = [number, number, number, number];

export class LabelLayer {
  private readonly boxes: Rect[] = [];
  constructor(private readonly ctx: SKRSContext2D) {}

  private font(s: LabelSpec): string {
    return `${s.italic ? 'italic ' : ''}${s.weight ?? 400} ${s.size}px ${LABEL_FONT}`;
  }

  /** Measures a label, returns false if it collides with one already placed, otherwise draws it. */
  place(s: LabelSpec): boolean {
    const ctx = this.ctx;
    ctx.font = this.font(s);
    const widths = s.lines.map((l) => ctx.measureText(l).width);
    const w = Math.max(...widths);
    const lh = s.size * 1.25;
    const h = lh * s.lines.length;
    const pad = s.pad ?? 3;
    const dy = s.dot ? 4 + h / 2 : 0; // text block centre relative to the anchor
    let rect: Rect;
    if (s.angle) {
      const c = Math.abs(Math.cos(s.angle));
      const si = Math.abs(Math.sin(s.angle));
      const bw = w * c + h * si;
      const bh = w * si + h * c;
      rect = [s.x - bw / 2 - pad, s.y - bh / 2 - pad, s.x + bw / 2 + pad, s.y + bh / 2 + pad];
    } else {
      rect = [s.x - w / 2 - pad, s.y + dy - h / 2 - pad, s.x + w / 2 + pad, s.y + dy + h / 2 + pad];
    }
    for (const b of this.boxes) if (b[0] < rect[2] && b[2] > rect[0] && b[1] < rect[3] && b[3] > rect[1]) return false;
    this.boxes.push(rect);
    this.draw(s, dy, lh);
    return true;
  }

  /** Width of the widest line, for callers that must know whether a label fits before placing it. */
  measure(lines: string[], size: number, weight: 400 | 600 = 400): number {
    this.ctx.font = `${weight} ${size}px ${LABEL_FONT}`;
    return Math.max(...lines.map((l) => this.ctx.measureText(l).width));
  }

  /** Reserves space without drawing (e.g. so road names avoid place labels drawn later). */
  reserve(r: Rect): void {
    this.boxes.push(r);
  }

  private draw(s: LabelSpec, dy: number, lh: number): void {
    const ctx = this.ctx;
    ctx.save();
    ctx.translate(s.x, s.y);
    if (s.dot) {
      ctx.beginPath();
      ctx.arc(0, 0, 2.6, 0, Math.PI * 2);
      ctx.fillStyle = s.dot;
      ctx.fill();
      ctx.lineWidth = 1;
      ctx.strokeStyle = '#ffffff';
      ctx.stroke();
    }
    if (s.angle) ctx.rotate(s.angle);
    ctx.font = this.font(s);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    ctx.lineWidth = Math.max(2.5, s.size / 4);
    ctx.strokeStyle = COLORS.halo;
    ctx.fillStyle = s.color ?? COLORS.text;
    const top = dy - (lh * (s.lines.length - 1)) / 2;
    s.lines.forEach((line, i) => {
      ctx.strokeText(line, 0, top + i * lh);
      ctx.fillText(line, 0, top + i * lh);
    });
    ctx.restore();
  }
}
