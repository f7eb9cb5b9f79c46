import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { startServer, errorCode, type TestServer } from './helpers/app.js';
import { signJwt } from '../src/auth/jwt.js';
import { tileToken } from './helpers/tiles.js';

const JWT_SECRET = 'jwt-secret-for-hardening-0123456789abcdef';
const nowS = () => Math.floor(Date.now() / 1000);
const jwt = (claims: Record<string, unknown>) =>
  signJwt({ sub: 'u1', exp: nowS() + 3600, ...claims }, Buffer.from(JWT_SECRET));
/** Signs a payload given as raw JSON text (JSON.stringify cannot write 1e309). */
const rawJwt = (payload: string) => {
  const body = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  return `${body}.${createHmac('sha256', JWT_SECRET).update(body).digest('base64url')}`;
};

describe('tile tokens are accepted only in their canonical spelling', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.close());

  it('refuses a token with a character appended or with non-canonical trailing bits', async () => {
    const token = await tileToken(s);
    const path = '/maps/v1/sprites/svc.json';
    expect((await s.get(`${path}?t=${token}`)).status).toBe(200);
    for (const extra of ['x', 'A', '-', 'AA', 'AAA', 'AAAA']) {
      const r = await s.get(`${path}?t=${token}${extra}`);
      expect(r.status, extra).toBe(401);
      expect(await errorCode(r)).toBe('INVALID_TOKEN');
    }
    // The last character of an unpadded base64url string may carry unused low bits: set them and the decoded bytes
    // stay the same, so only a canonical re-encoding can tell the spellings apart.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1)!);
    const spare = token.length % 4 === 2 ? 0b1111 : token.length % 4 === 3 ? 0b11 : 0;
    for (let bits = 1; bits <= spare; bits++) {
      const variant = token.slice(0, -1) + alphabet[last | bits];
      if (variant === token) continue;
      expect(Buffer.from(variant, 'base64url').equals(Buffer.from(token, 'base64url'))).toBe(true);
      const r = await s.get(`${path}?t=${variant}`);
      expect(r.status, variant).toBe(401);
      expect(await errorCode(r)).toBe('INVALID_TOKEN');
    }
  });
});

describe('JWT time claims', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ auth: { jwt_secret: JWT_SECRET } });
  });
  afterAll(() => s?.close());
  const q = '/maps/v1/autocomplete?q=doha';
  const status = async (token: string) => {
    const r = await s.get(q, { Authorization: `Bearer ${token}` });
    return r.status === 200 ? 'ok' : await errorCode(r);
  };

  it('accepts a signature only in its canonical spelling', async () => {
    const token = jwt({});
    expect(await status(token)).toBe('ok');
    // 32 bytes are 43 base64url characters: the last one carries 2 unused bits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1)!);
    for (const variant of [1, 2, 3].map((b) => token.slice(0, -1) + alphabet[last ^ b])) {
      expect(await status(variant)).toBe('INVALID_TOKEN');
    }
    expect(await status(token + 'A')).toBe('INVALID_TOKEN');
  });

  it('honours nbf with a 60 s leeway', async () => {
    expect(await status(jwt({ nbf: nowS() + 3600 }))).toBe('INVALID_TOKEN');
    expect(await status(jwt({ nbf: nowS() + 120 }))).toBe('INVALID_TOKEN');
    expect(await status(jwt({ nbf: nowS() + 30 }))).toBe('ok'); // clock skew within the leeway
    expect(await status(jwt({ nbf: nowS() - 10 }))).toBe('ok');
    expect(await status(jwt({ nbf: 'soon' }))).toBe('INVALID_TOKEN');
  });

  it('refuses an iat beyond the leeway in the future', async () => {
    expect(await status(jwt({ iat: nowS() + 86_400 }))).toBe('INVALID_TOKEN');
    expect(await status(jwt({ iat: nowS() + 30 }))).toBe('ok');
    expect(await status(jwt({ iat: nowS() - 60 }))).toBe('ok');
  });

  it('refuses non-finite and absurd exp claims instead of treating them as never expiring', async () => {
    expect(await status(rawJwt(`{"sub":"u1","exp":1e309}`))).toBe('INVALID_TOKEN');
    expect(await status(rawJwt(`{"sub":"u1","exp":${nowS() + 3600},"nbf":-1e309}`))).toBe('INVALID_TOKEN');
    expect(await status(rawJwt(`{"sub":"u1","exp":${nowS() + 3600},"iat":1e309}`))).toBe('INVALID_TOKEN');
    expect(await status(jwt({ exp: nowS() + 10 * 365 * 86_400 }))).toBe('INVALID_TOKEN'); // past the 30-day maximum
    expect(await status(jwt({ exp: nowS() + 29 * 86_400 }))).toBe('ok');
    // A lifetime (exp - iat) past the maximum is refused even while the token is young.
    expect(await status(jwt({ iat: nowS() - 10, exp: nowS() + 29 * 86_400 }))).toBe('ok');
    expect(await status(jwt({ iat: nowS() - 2 * 86_400, exp: nowS() + 29 * 86_400 }))).toBe('INVALID_TOKEN');
    expect(await status(jwt({ exp: nowS() + 3600.5 }))).toBe('ok'); // NumericDate may carry fractions
  });
});

describe('conditional requests', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startServer();
    key = s.key().key;
  });
  afterAll(() => s?.close());

  it('answers 304 to If-None-Match with a weak tag, a list holding the tag, or *', async () => {
    for (const path of ['/maps/v1/style/svc', '/maps/v1/sprites/svc.json']) {
      const first = await s.get(path, { 'X-API-Key': key });
      expect(first.status).toBe(200);
      const tag = first.headers.get('etag')!;
      expect(tag).toMatch(/^"[^"]+"$/);
      for (const inm of [tag, `W/${tag}`, `"a", W/${tag}`, `W/"zz",${tag}`, '*']) {
        const r = await s.get(path, { 'X-API-Key': key, 'If-None-Match': inm });
        expect(r.status, `${path} ${inm}`).toBe(304);
        expect(r.headers.get('etag')).toBe(tag);
      }
      for (const inm of ['"other"', 'W/"other"', `W/${tag.slice(0, -2)}"`, tag.slice(1, -1)]) {
        expect((await s.get(path, { 'X-API-Key': key, 'If-None-Match': inm })).status, `${path} ${inm}`).toBe(200);
      }
    }
  });
});
