import { AppError } from '../../core/errors.js';
import { KEY_ID_RE } from '../../auth/api-keys.js';
import type { Services } from '../../services.js';
import { ok } from '../envelope.js';
import type { Router } from '../router.js';

export function register(router: Router, s: Services): void {
  router.add({
    method: 'DELETE',
    pattern: '/admin/keys/:id',
    surface: 'admin',
    handler: (ctx) => {
      const id = ctx.params.id!;
      if (!KEY_ID_RE.test(id)) throw new AppError('KEY_NOT_FOUND');
      const key = s.keyAdmin.revoke(id);
      // Drop the tile family's cached key state now, so tokens of this key stop working at once.
      s.auth.invalidateKey(id);
      return ok({ revoked: true, key });
    },
  });
}
