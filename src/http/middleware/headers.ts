import type { HttpReply, HttpRequest } from '../types.js';

/** Sent on every response, errors and timeouts included. HSTS goes out even over plain HTTP behind a TLS proxy. */
const SECURITY_HEADERS: Record<string, string> = {
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains; preload',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
};

const EXPOSED = 'X-Request-ID, X-Tile-Source, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, ETag';
const PREFLIGHT_ALLOW_HEADERS = 'X-API-Key, Authorization, Content-Type, X-Request-ID, X-Svc-Prefetch';

const OPEN_CORS: Record<string, string> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED,
});

export const isMapsPath = (path: string): boolean => path === '/maps/v1' || path.startsWith('/maps/v1/');

/** Browser access to /maps/v1 from other origins; no credentials mode, the token travels in the URL. */
function corsHeaders(req: HttpRequest, origins: string[]): Record<string, string> {
  if (!isMapsPath(req.path)) return {};
  if (origins.includes('*')) return OPEN_CORS;
  const origin = req.headers['origin'];
  if (origin && origins.includes(origin)) {
    return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED, Vary: 'Origin' };
  }
  return {};
}

export function preflightHeaders(allowed: string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Methods': [...new Set([...allowed, 'OPTIONS'])].join(', '),
    'Access-Control-Allow-Headers': PREFLIGHT_ALLOW_HEADERS,
    'Access-Control-Max-Age': '600',
  };
}

const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

/** Adds the per-response headers without overriding what a handler set deliberately (e.g. raster-nav's CORS). */
export function decorate(reply: HttpReply, req: HttpRequest, origins: string[]): HttpReply {
  const h = reply.headers;
  for (const [k, v] of SECURITY_ENTRIES) h[k] ??= v;
  const cors = corsHeaders(req, origins);
  for (const k in cors) h[k] ??= cors[k]!;
  h['X-Request-ID'] = req.requestId;
  return reply;
}
