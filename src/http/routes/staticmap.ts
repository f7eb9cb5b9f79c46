import { clampSize, parseStaticPath, STATIC_DEFAULT_H, STATIC_DEFAULT_W } from '../../tiles/staticmap.js';
import type { Services } from '../../services.js';
import type { Router } from '../router.js';

/**
 * Credentialed like the JSON endpoints (no tile tokens), billed to the `tiles` bucket, bare 400/502 errors, and a bare
 * 503 with Retry-After when the renderer cannot start the map in time (admission control).
 */
export function register(router: Router, s: Services): void {
  router.add({
    method: 'GET',
    pattern: '/maps/v1/staticmap',
    surface: 'json',
    bucket: 'tiles',
    binary: true,
    shed: () => s.staticMaps.refusalNow?.(),
    handler: async (ctx) => {
      const q = ctx.req.query;
      const path = parseStaticPath(q.get('path'));
      const png = await s.staticMaps.render(
        path,
        clampSize(q.get('w'), STATIC_DEFAULT_W),
        clampSize(q.get('h'), STATIC_DEFAULT_H),
        ctx.req.signal,
      );
      ctx.miss = true;
      return {
        status: 200,
        headers: { 'Content-Type': 'image/png', 'Cache-Control': 'public, max-age=86400' },
        body: png,
      };
    },
  });
}
