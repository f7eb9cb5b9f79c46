import { AppError, isAppError } from '../../core/errors.js';
import { sniffImageType } from '../../core/image-type.js';
import { parseTilePath } from '../../tiles/request.js';
import type { Services } from '../../services.js';
import type { Router } from '../router.js';
import { withEtag } from '../etag.js';

const VERIFIED_CACHE = 'public, max-age=3600, stale-while-revalidate=86400';
const DEGRADED_CACHE = 'no-store';

export function register(router: Router, s: Services): void {
  router.add(
    {
      method: 'GET',
      pattern: '/maps/v1/tiles/:z/:x/:y',
      surface: 'tile',
      tileFamily: true,
      binary: true,
      urgent: (_req, p) => {
        try {
          return s.tiles.isHot?.(parseTilePath(p.z!, p.x!, p.y!, false)) ?? false;
        } catch (e) {
          if (isAppError(e)) return true; // a malformed address is a 400 at once
          throw e;
        }
      },
      handler: async (ctx) => {
        const prefetch = ctx.req.headers['x-svc-prefetch'] !== undefined;
        const t = parseTilePath(ctx.params.z!, ctx.params.x!, ctx.params.y!, prefetch);
        const answer = await s.tiles.tile({ ...t, signal: ctx.req.signal });
        if (!answer) throw new AppError('NOT_FOUND');
        const degraded = !['cache', 'memory', 'fresh', 'fresh-prefetch'].includes(answer.source);
        if (degraded && prefetch) throw new AppError('TILE_DEGRADED');
        const type = sniffImageType(answer.bytes);
        if (!type) throw new AppError('RENDER_FAILED', 'origin returned a non-image body');
        ctx.miss = answer.source.startsWith('fresh');
        return withEtag(
          ctx.req,
          {
            status: 200,
            headers: {
              'Content-Type': type,
              'X-Tile-Source': answer.source,
              'Cache-Control': degraded ? DEGRADED_CACHE : VERIFIED_CACHE,
            },
            body: answer.bytes,
          },
          answer.etag,
        );
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/vector/*rest',
      surface: 'tile',
      tileFamily: true,
      handler: () => {
        throw new AppError('VECTOR_TILES_NOT_SUPPORTED');
      },
    },
  );
}
