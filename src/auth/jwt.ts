import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../core/errors.js';

export interface JwtClaims {
  sub: string;
  role: string;
  exp: number;
  sid?: string;
  iat?: number;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function decodeJson(part: string): Record<string, unknown> {
  if (!B64URL.test(part)) throw new AppError('INVALID_TOKEN');
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v;
  } catch {
    /* fall through */
  }
  throw new AppError('INVALID_TOKEN');
}

/**
 * Verifies an HS256 JWT. Only HS256 is accepted (no `none`, no algorithm switching); `exp` and `sub` are required.
 */
export function verifyJwt(token: string, secret: Buffer, nowS: number): JwtClaims {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 8192) throw new AppError('INVALID_TOKEN');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h);
  if (header.alg !== 'HS256') throw new AppError('INVALID_TOKEN');
  if (!B64URL.test(s)) throw new AppError('INVALID_TOKEN');
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(s, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AppError('INVALID_TOKEN');
  const c = decodeJson(p);
  if (typeof c.sub !== 'string' || !c.sub || typeof c.exp !== 'number') throw new AppError('INVALID_TOKEN');
  if (c.exp <= nowS) throw new AppError('TOKEN_EXPIRED');
  return {
    sub: c.sub,
    role: typeof c.role === 'string' ? c.role : 'user',
    exp: c.exp,
    sid: typeof c.sid === 'string' && c.sid ? c.sid : undefined,
    iat: typeof c.iat === 'number' ? c.iat : undefined,
  };
}

/** Signs claims as an HS256 JWT; used by tests and the self-test to play the platform's part. */
export function signJwt(claims: Record<string, unknown>, secret: Buffer): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const body = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
