import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../core/errors.js';
import { KEY_ID_RE } from './api-keys.js';

/*
 * Token layout before base64url: version (1 byte) | expiry, Unix seconds (uint32 BE) | caller-id length (1 byte) |
 * caller id (UTF-8) | HMAC-SHA256 over everything before it (32 bytes). Stateless: verification needs only the secret.
 */
const VERSION = 1;
const SIG_LEN = 32;
const MIN_LEN = 1 + 4 + 1 + 1 + SIG_LEN;
const TOKEN_RE = /^[A-Za-z0-9_-]{40,400}$/;

export const KEY_CALLER_PREFIX = 'mapskey:';

export function mintTileToken(callerId: string, expS: number, secret: Buffer): string {
  const id = Buffer.from(callerId, 'utf8');
  if (id.length === 0 || id.length > 255) throw new AppError('TILE_TOKEN_FAILED');
  const head = Buffer.alloc(6);
  head.writeUInt8(VERSION, 0);
  head.writeUInt32BE(expS, 1);
  head.writeUInt8(id.length, 5);
  const body = Buffer.concat([head, id]);
  const sig = createHmac('sha256', secret).update(body).digest();
  return Buffer.concat([body, sig]).toString('base64url');
}

/**
 * Verifies signature and expiry, then the key binding; returns the bound key id and the expiry. A token is accepted
 * only in its one canonical spelling: Node's base64url decoder ignores a dangling last character and unused low bits,
 * so the decoded bytes are re-encoded and compared (constant time) with what was sent.
 */
export function verifyTileToken(token: string, secret: Buffer, nowS: number): { keyId: string; expS: number } {
  if (!TOKEN_RE.test(token)) throw new AppError('INVALID_TOKEN');
  const buf = Buffer.from(token, 'base64url');
  const canonical = Buffer.from(buf.toString('base64url'));
  const given = Buffer.from(token);
  if (canonical.length !== given.length || !timingSafeEqual(canonical, given)) throw new AppError('INVALID_TOKEN');
  if (buf.length < MIN_LEN || buf.readUInt8(0) !== VERSION) throw new AppError('INVALID_TOKEN');
  const idLen = buf.readUInt8(5);
  if (buf.length !== 6 + idLen + SIG_LEN) throw new AppError('INVALID_TOKEN');
  const body = buf.subarray(0, 6 + idLen);
  const expected = createHmac('sha256', secret).update(body).digest();
  if (!timingSafeEqual(expected, buf.subarray(6 + idLen))) throw new AppError('INVALID_TOKEN');
  const expS = buf.readUInt32BE(1);
  if (expS <= nowS) throw new AppError('TOKEN_EXPIRED');
  const caller = body.subarray(6).toString('utf8');
  const keyId = caller.startsWith(KEY_CALLER_PREFIX) ? caller.slice(KEY_CALLER_PREFIX.length) : '';
  if (!KEY_ID_RE.test(keyId)) throw new AppError('TOKEN_NOT_KEY_BOUND');
  return { keyId, expS };
}
