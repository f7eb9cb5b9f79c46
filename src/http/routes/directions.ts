import { parseDirections } from '../../routing/request.js';
import type { Services } from '../../services.js';
import { ok } from '../envelope.js';
import type { Router } from '../router.js';
import { jsonBody, pickLocale } from '../validate.js';

export function register(router: Router, s: Services): void {
  router.add(
    {
      method: 'POST',
      pattern: '/maps/v1/directions',
      surface: 'json',
      bucket: 'gather',
      handler: async (ctx) => {
        const r = parseDirections(jsonBody(ctx.req), pickLocale(ctx.req));
        const answer = await s.directions.directions({ ...r, signal: ctx.req.signal });
        ctx.miss = answer.source !== 'memory' && answer.source !== 'sqlite';
        return ok(answer);
      },
    },
    {
      method: 'POST',
      pattern: '/maps/v1/prefetch-directions',
      surface: 'json',
      handler: (ctx) => ok(s.directions.prefetch(parseDirections(jsonBody(ctx.req), pickLocale(ctx.req)))),
    },
  );
}
