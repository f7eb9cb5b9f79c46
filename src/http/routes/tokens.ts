import type { Services } from '../../services.js';
import { ok } from '../envelope.js';
import type { Router } from '../router.js';

export function register(router: Router, s: Services): void {
  router.add({
    method: 'POST',
    pattern: '/maps/v1/tile-token',
    surface: 'mint',
    handler: (ctx) => {
      const { token, expiresAtS } = s.auth.mint(ctx.caller!);
      return ok({ token, expires_at: new Date(expiresAtS * 1000).toISOString() }, { 'Cache-Control': 'no-store' });
    },
  });
}
