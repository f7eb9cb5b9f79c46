import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, errorCode, type TestServer } from './helpers/app.js';
import { tileToken } from './helpers/tiles.js';

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
