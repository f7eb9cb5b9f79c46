import { expect, expectStatus, pngSize } from './client.js';
import { Skip, type Check } from './types.js';

/**
 * A tile nobody has asked for: zoom 16 within about 65 km of Amman, picked at random per run (one of 65,536),
 * so the first request must be produced by the origin (cold), the second comes from memory (hot), and another format
 * of it from the MBTiles warm tier (the hot tier keys by format, the warm tier stores one image per address).
 */
function freshTile(): string {
  const z = 16;
  const n = 2 ** z;
  const lat = (31.9539 * Math.PI) / 180;
  const x = Math.floor(((35.9106 + 180) / 360) * n) + Math.floor(Math.random() * 256) - 128;
  const y =
    Math.floor(((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * n) +
    Math.floor(Math.random() * 256) -
    128;
  return `${z}/${x}/${y}`;
}

const GLYPH_STACK = encodeURIComponent('Noto Sans Regular');

/** The tile family's checks; a new set per run, each with its own never-requested tile. */
export function tileChecks(tile = freshTile()): Check[] {
  return [
    {
      id: 'tiles-cold',
      label: 'tiles: cold (origin)',
      async run({ client }) {
        const r = await client.get(`/maps/v1/tiles/${tile}.png`);
        expectStatus(r, 200, `tile ${tile}`);
        const src = r.headers.get('x-tile-source');
        expect(src === 'fresh', `tile ${tile} came from "${src}", expected a fresh render`);
        expect(pngSize(r.body)?.w === 256, 'not a 256 px PNG');
        return `${tile} rendered in ${Math.round(r.ms)} ms, ${r.body.length} B`;
      },
    },
    {
      id: 'tiles-hot',
      label: 'tiles: hot (memory)',
      async run({ client }) {
        const r = await client.get(`/maps/v1/tiles/${tile}.png`);
        expectStatus(r, 200, `tile ${tile}`);
        expect(
          r.headers.get('x-tile-source') === 'memory',
          `repeat came from "${r.headers.get('x-tile-source')}", expected memory`,
        );
        return `${tile} from memory in ${r.ms.toFixed(1)} ms`;
      },
    },
    {
      id: 'tiles-warm',
      label: 'tiles: warm (MBTiles)',
      async run({ client }) {
        await new Promise((r) => setTimeout(r, 100)); // the warm tier commits its write queue once per tick
        const r = await client.get(`/maps/v1/tiles/${tile}.webp`);
        expectStatus(r, 200, `tile ${tile}.webp`);
        const src = r.headers.get('x-tile-source');
        if (src === 'fresh') return new Skip('tile store disabled (tiles.store = false): no warm tier');
        expect(src === 'cache', `webp of a stored tile came from "${src}", expected cache`);
        expect(r.headers.get('content-type') === 'image/webp', `content type ${r.headers.get('content-type')}`);
        return `${tile}.webp from the store in ${Math.round(r.ms)} ms`;
      },
    },
    {
      id: 'style',
      label: 'style JSON',
      async run({ client }) {
        const r = await client.get('/maps/v1/style/raster-nav?token=abc');
        expectStatus(r, 200, 'style raster-nav');
        const s = r.json<{ version: number; sources?: Record<string, unknown>; layers: unknown[]; glyphs: string }>();
        const src = Object.values(s.sources ?? {})[0] as { tiles?: string[]; tileSize?: number } | undefined;
        expect(
          s.version === 8 && src?.tiles?.[0]?.includes('{z}/{x}/{y}@2x') && src.tileSize === 256,
          'raster-nav is not a version 8 style with an @2x tile template',
        );
        expect(src!.tiles![0]!.includes('t=abc'), 'token not embedded in the tile URL');
        expectStatus(await client.get('/maps/v1/style/svc.json'), 200, 'style svc');
        expectStatus(await client.get('/maps/v1/style/nope'), 404, 'unknown style');
        return `raster-nav and svc; ${s.layers.length} layer(s), glyphs ${s.glyphs}`;
      },
    },
    {
      id: 'glyphs',
      label: 'glyphs (Latin, Arabic)',
      async run({ client }) {
        const sizes = [];
        for (const range of ['0-255', '1536-1791']) {
          const r = await client.get(`/maps/v1/glyphs/${GLYPH_STACK}/${range}.pbf`);
          expectStatus(r, 200, `glyphs ${range}`);
          expect(
            r.headers.get('content-type') === 'application/x-protobuf' && r.body.length > 1000,
            `glyphs ${range}: ${r.headers.get('content-type')}, ${r.body.length} B`,
          );
          sizes.push(`${range}: ${(r.body.length / 1024).toFixed(0)} KiB`);
        }
        return sizes.join(', ');
      },
    },
    {
      id: 'staticmap',
      label: 'static map',
      async run({ client }) {
        const r = await client.get(
          '/maps/v1/staticmap?path=31.9539,35.9106,31.9700,35.8900,31.9800,35.9300&w=320&h=200',
        );
        expectStatus(r, 200, 'staticmap');
        const size = pngSize(r.body);
        expect(
          size?.w === 320 && size.h === 200,
          `expected a 320x200 PNG, got ${size ? `${size.w}x${size.h}` : 'no PNG'}`,
        );
        expectStatus(await client.get('/maps/v1/staticmap?path=31.95,35.91'), 400, 'one point');
        return `320x200 PNG, ${(r.body.length / 1024).toFixed(0)} KiB in ${Math.round(r.ms)} ms`;
      },
    },
    {
      id: 'metrics',
      label: 'metrics (/admin/metrics)',
      async run(t) {
        const r = await t.client.get('/admin/metrics', t.adminKey ? { key: t.adminKey } : undefined);
        if (!t.adminKey && (r.status === 403 || r.status === 404))
          return new Skip('the key is not super_admin (metrics are admin-only)');
        expectStatus(r, 200, '/admin/metrics');
        const text = r.body.toString('utf8');
        const m = /svcmaps_http_requests_total\{route="\/maps\/v1\/autocomplete",status="200"\} (\d+)/.exec(text);
        expect(m && Number(m[1]) > 0, 'no autocomplete requests counted');
        expect(
          /svcmaps_answers_total\{route="\/maps\/v1\/tiles\/:z\/:x\/:y",source="memory"\} \d+/.test(text),
          'no tile hot-tier answers counted',
        );
        return `${text.split('\n').filter((l) => l && !l.startsWith('#')).length} series; ${m[1]} autocomplete 200s counted`;
      },
    },
  ];
}
