import { AppError } from '../../core/errors.js';
import { ConsoleFiles } from '../../resources/console.js';
import type { Services } from '../../services.js';
import type { HttpReply, HttpRequest } from '../types.js';
import type { Router } from '../router.js';
import { withEtag } from '../etag.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** No inline script or style; MapLibre needs blob: workers and data:/blob: images. */
export function consoleCsp(publicUrl: string): string {
  const extra = publicUrl ? ` ${new URL(publicUrl).origin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${extra}`,
    `connect-src 'self'${extra}`,
    "worker-src 'self' blob:",
    "child-src 'self' blob:",
    "font-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The web console at / and /console/: static files built into dist/console, held in memory (see ConsoleFiles). */
export function register(router: Router, s: Services, files = new ConsoleFiles()): void {
  if (!s.config.console.enabled) return;
  const csp = consoleCsp(s.config.public_url);
  const serve = (req: HttpRequest, rel: string): HttpReply => {
    if (!files.available) {
      return {
        status: 503,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
        body: 'The console is not built on this server (dist/console is missing): run `npm run build`.\n',
      };
    }
    const f = files.get(rel);
    if (!f) throw new AppError('NOT_FOUND');
    const headers = {
      'Content-Type': f.type,
      'Cache-Control': f.immutable ? IMMUTABLE : 'no-cache',
      'Content-Security-Policy': csp,
    };
    return withEtag(req, { status: 200, headers, body: f.body }, f.etag);
  };
  router.add(
    { method: 'GET', pattern: '/', surface: 'none', handler: (ctx) => serve(ctx.req, 'index.html') },
    {
      method: 'GET',
      pattern: '/console',
      surface: 'none',
      handler: () => ({ status: 308, headers: { Location: '/console/', 'Cache-Control': 'no-cache' } }),
    },
    {
      method: 'GET',
      pattern: '/console/*path',
      surface: 'none',
      handler: (ctx) => serve(ctx.req, ctx.params.path === '' ? 'index.html' : ctx.params.path!),
    },
  );
}
