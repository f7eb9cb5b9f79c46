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
        const req = ctx.req;
        // The request's abort signal is made only if a query goes to a routing thread: an AbortController costs
        // ~20 us, a twentieth of a short route answered on this thread (route-inline.ts).
        const answer = await s.directions.directions({
          ...r,
          get signal() {
            return req.signal;
          },
        });
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
