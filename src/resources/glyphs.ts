import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../core/errors.js';
import { packagePath } from './paths.js';
import { etagOf } from '../core/etag.js';

export interface Glyphs {
  bytes: Buffer;
  etag: string;
}

const glyphs = (bytes: Buffer): Glyphs => ({ bytes, etag: etagOf(bytes) });

/** Latin, Latin Extended, Arabic, and the Arabic presentation forms MapLibre asks for once it has shaped Arabic text. */
const BUNDLED_RANGES = ['0-255', '256-511', '1536-1791', '64256-64511', '65024-65279'].map((r) => `${r}.pbf`);

/**
 * SDF glyph ranges from fonts/<fontstack>/<start>-<end>.pbf, all read once at start-up (a few hundred KB).
 * "Noto Sans Regular" is the bundled stack and covers Latin and Arabic; a few common names alias to it.
 */
export class GlyphStore {
  private readonly stacks = new Map<string, Map<string, Glyphs>>();
  private static readonly ALIASES: Record<string, string> = {
    'Noto Sans Arabic Regular': 'Noto Sans Regular',
    'Noto Sans Arabic UI Regular': 'Noto Sans Regular',
  };

  constructor(dir = packagePath('fonts')) {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const ranges = new Map<string, Glyphs>();
      for (const f of readdirSync(join(dir, e.name)))
        if (BUNDLED_RANGES.includes(f)) ranges.set(f, glyphs(readFileSync(join(dir, e.name, f))));
      if (ranges.size) this.stacks.set(e.name, ranges);
    }
  }

  get fontstacks(): string[] {
    return [...this.stacks.keys()];
  }

  /** Slashes or backslashes anywhere are a bare 400; unknown stacks and unbundled ranges are a bare 404. */
  get(fontstack: string, range: string): Glyphs {
    if (/[/\\]/.test(fontstack) || /[/\\]/.test(range))
      throw new AppError('VALIDATION_ERROR', 'path separator in glyph request');
    if (!BUNDLED_RANGES.includes(range)) throw new AppError('NOT_FOUND');
    for (const candidate of fontstack.split(',')) {
      const name = candidate.trim();
      const stack = this.stacks.get(GlyphStore.ALIASES[name] ?? name);
      if (!stack) continue;
      const bytes = stack.get(range);
      if (bytes) return bytes;
    }
    throw new AppError('NOT_FOUND');
  }
}
