import { readFileSync } from 'node:fs';
import { AppError } from '../core/errors.js';
import { packagePath } from './paths.js';

export const STYLE_NAMES = ['raster-nav', 'svc', 'maplibre'] as const;
const TOKEN_RE = /^[A-Za-z0-9_-]{1,512}$/;
export const ATTRIBUTION = '© OpenStreetMap contributors (ODbL) · GeoNames (CC BY 4.0) · Natural Earth';

/** A style's absolute or host-relative URLs, with an optional tile token appended to every templated URL. */
function urls(base: string, token: string | undefined) {
  const t = token ? `?t=${token}` : '';
  return {
    glyphs: `${base}/maps/v1/glyphs/{fontstack}/{range}.pbf${t}`,
    tiles: `${base}/maps/v1/tiles/{z}/{x}/{y}@2x.png${t}`,
  };
}

/** The generated raster style: one raster source (256 px tiles served @2x) and one raster layer, per the spec. */
export function rasterNavStyle(base: string, token?: string): Record<string, unknown> {
  const u = urls(base, token);
  return {
    version: 8,
    name: 'svcmaps raster-nav',
    metadata: { 'svc:attribution': ATTRIBUTION },
    glyphs: u.glyphs,
    sources: {
      'svc-raster': { type: 'raster', tiles: [u.tiles], tileSize: 256, minzoom: 0, maxzoom: 20, attribution: '' },
    },
    layers: [{ id: 'svc-raster', type: 'raster', source: 'svc-raster' }],
  };
}

/**
 * The bundled on-disk style (styles/svc.json). Its URLs carry `__BASE__` and `__TOKEN__` placeholders; a missing
 * token removes the whole `?t=__TOKEN__` query rather than leaving an empty one.
 */
export class BundledStyle {
  private readonly template: string;

  constructor(file = packagePath('styles', 'svc.json')) {
    this.template = readFileSync(file, 'utf8');
    JSON.parse(this.template); // fail at start-up, not per request, if the bundled file is broken
  }

  render(base: string, token?: string): string {
    const withToken = token
      ? this.template.replaceAll('__TOKEN__', token)
      : this.template.replaceAll('?t=__TOKEN__', '').replaceAll('&t=__TOKEN__', '');
    return withToken.replaceAll('__BASE__', base);
  }
}

/** Style names accept a `.json` suffix; the `token` value is checked so it cannot inject into the JSON. */
export function parseStyleName(raw: string): (typeof STYLE_NAMES)[number] {
  const name = raw.endsWith('.json') ? raw.slice(0, -5) : raw;
  if (!(STYLE_NAMES as readonly string[]).includes(name)) throw new AppError('NOT_FOUND');
  return name as (typeof STYLE_NAMES)[number];
}

export function parseEmbedToken(v: string | null): string | undefined {
  if (v === null || v === '') return undefined;
  if (!TOKEN_RE.test(v)) throw new AppError('VALIDATION_ERROR', 'token: not a tile token');
  return v;
}
