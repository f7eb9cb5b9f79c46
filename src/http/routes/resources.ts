import { rasterNavStyle, parseEmbedToken, parseStyleName } from '../../resources/styles.js';
import { sprite } from '../../resources/sprites.js';
import type { Services } from '../../services.js';
import type { Router } from '../router.js';
import { withEtag } from '../etag.js';

const STYLE_CACHE = 'private, max-age=60';
const GLYPH_CACHE = 'public, max-age=2592000, immutable';
const SPRITE_CACHE = 'public, max-age=3600';

/** Styles, glyphs and sprites: the tile family's static resources (tile-token or header auth, bare 4xx). */
export function register(router: Router, s: Services): void {
  const base = s.config.public_url;
  router.add(
    {
      method: 'GET',
      pattern: '/maps/v1/style/:name',
      surface: 'tile',
      tileFamily: true,
      binary: true,
      handler: (ctx) => {
        const name = parseStyleName(ctx.params.name!);
        const token = parseEmbedToken(ctx.req.query.get('token'));
        const headers: Record<string, string> = { 'Content-Type': 'application/json', 'Cache-Control': STYLE_CACHE };
        if (name === 'raster-nav') headers['Access-Control-Allow-Origin'] = '*';
        const body = name === 'raster-nav' ? JSON.stringify(rasterNavStyle(base, token)) : s.style.render(base, token);
        return withEtag(ctx.req, { status: 200, headers, body });
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/glyphs/*path',
      surface: 'tile',
      tileFamily: true,
      binary: true,
      handler: (ctx) => {
        const path = ctx.params.path!;
        const cut = path.lastIndexOf('/');
        // Everything before the last segment is the fontstack; a slash inside it is rejected by the store (400).
        const g = cut < 0 ? s.glyphs.get('', path) : s.glyphs.get(path.slice(0, cut), path.slice(cut + 1));
        return withEtag(
          ctx.req,
          {
            status: 200,
            headers: { 'Content-Type': 'application/x-protobuf', 'Cache-Control': GLYPH_CACHE },
            body: g.bytes,
          },
          g.etag,
        );
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/sprites/*name',
      surface: 'tile',
      tileFamily: true,
      binary: true,
      handler: (ctx) => {
        const sp = sprite(ctx.params.name!);
        return withEtag(
          ctx.req,
          { status: 200, headers: { 'Content-Type': sp.type, 'Cache-Control': SPRITE_CACHE }, body: sp.body },
          sp.etag,
        );
      },
    },
  );
}
