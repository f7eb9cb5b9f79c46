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

/** Clock skew tolerated on `nbf` and `iat` (a token issued by a clock slightly ahead of ours), in seconds. */
const JWT_LEEWAY_S = 60;
/** The longest lifetime accepted: `exp` at most this far past `iat` (when given) and past now. */
const JWT_MAX_LIFETIME_S = 30 * 86_400;

/** A NumericDate claim: absent, or a finite number (JSON.parse turns 1e309 into Infinity). */
function numericDate(c: Record<string, unknown>, name: string): number | undefined {
  const v = c[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new AppError('INVALID_TOKEN');
  return v;
}

function decodeJson(part: string): Record<string, unknown> {
  if (!B64URL.test(part)) throw new AppError('INVALID_TOKEN');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch (e) {
    if (e instanceof SyntaxError) throw new AppError('INVALID_TOKEN');
    throw e;
  }
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new AppError('INVALID_TOKEN');
}

/**
 * Verifies an HS256 JWT. Only HS256 is accepted (no `none`, no algorithm switching); `exp` and `sub` are required.
 * Time claims must be finite numbers; `nbf` and `iat` may lie at most JWT_LEEWAY_S in the future, and `exp` at most
 * JWT_MAX_LIFETIME_S past `iat` and past now (a token that claims to live for years is refused, not trusted).
 */
export function verifyJwt(token: string, secret: Buffer, nowS: number): JwtClaims {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 8192) throw new AppError('INVALID_TOKEN');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h);
  if (header.alg !== 'HS256') throw new AppError('INVALID_TOKEN');
  if (!B64URL.test(s)) throw new AppError('INVALID_TOKEN');
  // Compared as text against the canonical encoding, so a signature spelled with spare low bits set is refused too.
  const expected = Buffer.from(createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url'));
  const given = Buffer.from(s);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AppError('INVALID_TOKEN');
  const c = decodeJson(p);
  if (typeof c.sub !== 'string' || !c.sub) throw new AppError('INVALID_TOKEN');
  const exp = numericDate(c, 'exp');
  const nbf = numericDate(c, 'nbf');
  const iat = numericDate(c, 'iat');
  if (exp === undefined) throw new AppError('INVALID_TOKEN');
  if (nbf !== undefined && nbf > nowS + JWT_LEEWAY_S) throw new AppError('INVALID_TOKEN');
  if (iat !== undefined && (iat > nowS + JWT_LEEWAY_S || exp - iat > JWT_MAX_LIFETIME_S)) {
    throw new AppError('INVALID_TOKEN');
  }
  if (exp > nowS + JWT_MAX_LIFETIME_S) throw new AppError('INVALID_TOKEN');
  if (exp <= nowS) throw new AppError('TOKEN_EXPIRED');
  return {
    sub: c.sub,
    role: typeof c.role === 'string' ? c.role : 'user',
    exp,
    sid: typeof c.sid === 'string' && c.sid ? c.sid : undefined,
    iat,
  };
}

/** Signs claims as an HS256 JWT; used by tests and the self-test to play the platform's part. */
export function signJwt(claims: Record<string, unknown>, secret: Buffer): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const body = `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
