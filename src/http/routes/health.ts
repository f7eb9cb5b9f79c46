import type { Services } from '../../services.js';
import { jsonReply } from '../envelope.js';
import type { Router } from '../router.js';

/** Health answers flat JSON (load balancers and probes read `status` directly) and needs no credentials. */
export function register(router: Router, s: Services): void {
  router.add(
    {
      method: 'GET',
      pattern: '/livez',
      surface: 'none',
      urgent: () => true,
      handler: () => jsonReply(200, { status: 'ok' }, { 'Cache-Control': 'no-store' }),
    },
    {
      method: 'GET',
      pattern: '/healthz',
      surface: 'none',
      urgent: () => true,
      handler: () => {
        const h = s.health();
        const ok = h.postgres === 'ok' && h.redis === 'ok' && h.svc_wired;
        return jsonReply(ok ? 200 : 503, { status: ok ? 'ok' : 'degraded', ...h }, { 'Cache-Control': 'no-store' });
      },
    },
    {
      // Ready once nothing is still loading in the background (road graph, routing and places threads); a part that
      // ended without data (`no_graph`, `unavailable`) is ready: it answers the degraded line, and waiting will not help.
      method: 'GET',
      pattern: '/readyz',
      surface: 'none',
      urgent: () => true,
      handler: () => {
        const r = s.readiness();
        const ready = r.routing !== 'loading' && r.places !== 'loading';
        return jsonReply(
          ready ? 200 : 503,
          { status: ready ? 'ready' : 'starting', ...r },
          { 'Cache-Control': 'no-store' },
        );
      },
    },
  );
}
