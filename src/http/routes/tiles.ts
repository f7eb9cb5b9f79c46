import { AppError, isAppError } from '../../core/errors.js';
import { sniffImageType } from '../../core/image-type.js';
import { parseTilePath } from '../../tiles/request.js';
import type { Services } from '../../services.js';
import type { RouteContext, Router } from '../router.js';
import type { HttpReply } from '../types.js';
import type { TileAnswer } from '../../tiles/types.js';
import { withEtag } from '../etag.js';

const VERIFIED_CACHE = 'public, max-age=3600, stale-while-revalidate=86400';
const DEGRADED_CACHE = 'no-store';
/** Sources of real content; any other (ancestor-z<N>) is a degraded stand-in. */
const VERIFIED = new Set(['cache', 'memory', 'fresh', 'fresh-prefetch']);

function tileReply(ctx: RouteContext, answer: TileAnswer | undefined, prefetch: boolean): HttpReply {
  if (!answer) throw new AppError('NOT_FOUND');
  const degraded = !VERIFIED.has(answer.source);
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
}

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
      // A tile the hot tier holds is answered without a promise: the adapter writes it inside its own handler.
      handler: (ctx) => {
        const prefetch = ctx.req.headers['x-svc-prefetch'] !== undefined;
        const t = parseTilePath(ctx.params.z!, ctx.params.x!, ctx.params.y!, prefetch);
        const hot = s.tiles.hot?.(t);
        if (hot) return tileReply(ctx, hot, prefetch);
        return s.tiles
          .tile({ ...t, signal: ctx.req.signal, hotChecked: s.tiles.hot !== undefined })
          .then((answer) => tileReply(ctx, answer, prefetch));
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
