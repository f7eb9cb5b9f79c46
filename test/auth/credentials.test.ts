import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startServer, errorCode, type TestServer } from '../helpers/app.js';
import { signJwt } from '../../src/auth/jwt.js';
import { mintTileToken } from '../../src/auth/tile-token.js';
import { readSecret } from '../../src/store/data-dir.js';

const JWT_SECRET = 'jwt-secret-for-tests-0123456789abcdef';
const clock = {
  t: Date.now(),
  nowMs() {
    return this.t;
  },
};
const jwt = (claims: Record<string, unknown>) =>
  signJwt({ exp: Math.floor(clock.t / 1000) + 3600, ...claims }, Buffer.from(JWT_SECRET));

async function mint(s: TestServer, headers: Record<string, string>): Promise<string> {
  const r = await fetch(s.url + '/maps/v1/tile-token', { method: 'POST', headers });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { token: string } }).data.token;
}

describe('API keys', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ auth: { jwt_secret: JWT_SECRET } }, { clock });
  });
  afterAll(() => s?.close());

  it('issues cmk_live_ keys of 32 base64url characters and stores only their SHA-256', () => {
    const { id, key } = s.key();
    expect(key).toMatch(/^cmk_live_[A-Za-z0-9_-]{32}$/);
    const db = new Database(join(s.dataDir, 'svcmaps.db'), { readonly: true });
    const dump = JSON.stringify(db.prepare('SELECT * FROM api_keys').all());
    const row = db.prepare('SELECT key_hash FROM api_keys WHERE id = ?').get(id) as { key_hash: string };
    db.close();
    expect(dump).not.toContain(key);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('distinguishes missing, malformed, unknown, revoked and expired keys on JSON endpoints', async () => {
    const q = '/maps/v1/autocomplete?q=amman';
    expect(await errorCode(await s.get(q))).toBe('MISSING_TOKEN');
    expect(await errorCode(await s.get(q, { 'X-API-Key': 'hello' }))).toBe('INVALID_API_KEY');
    expect(await errorCode(await s.get(q, { 'X-API-Key': 'cmk_live_' + 'A'.repeat(32) }))).toBe('INVALID_API_KEY');
    const revoked = s.key();
    s.app.services.keyAdmin.revoke(revoked.id);
    const r = await s.get(q, { 'X-API-Key': revoked.key });
    expect(r.status).toBe(401);
    expect(await errorCode(r)).toBe('INVALID_API_KEY');
    const expiring = s.key({ expiresInS: 60 });
    expect((await s.get(q, { 'X-API-Key': expiring.key })).status).toBe(200);
    clock.t += 61_000;
    expect(await errorCode(await s.get(q, { 'X-API-Key': expiring.key }))).toBe('API_KEY_EXPIRED');
  });

  it('notices a revoke committed by another process (the CLI) within 50 ms', async () => {
    const { id, key } = s.key();
    const q = '/maps/v1/autocomplete?q=a';
    expect((await s.get(q, { 'X-API-Key': key })).status).toBe(200); // the key row is now held in memory
    const other = new Database(join(s.dataDir, 'svcmaps.db'));
    other.prepare('UPDATE api_keys SET active = 0, revoked_at = ? WHERE id = ?').run(Math.floor(clock.t / 1000), id);
    other.close();
    await new Promise((r) => setTimeout(r, 60));
    expect(await errorCode(await s.get(q, { 'X-API-Key': key }))).toBe('INVALID_API_KEY');
  });

  it('does not accept a tile token on JSON endpoints, staticmap or minting', async () => {
    const { key } = s.key();
    const token = await mint(s, { 'X-API-Key': key });
    for (const path of ['/maps/v1/autocomplete?q=a', '/maps/v1/staticmap?path=31.9,35.9,32,36']) {
      const r = await s.get(`${path}&t=${token}`);
      expect(r.status).toBe(401);
      expect(await errorCode(r)).toBe('MISSING_TOKEN');
    }
    const m = await fetch(`${s.url}/maps/v1/tile-token?t=${token}`, { method: 'POST' });
    expect(await errorCode(m)).toBe('MISSING_TOKEN');
  });
});

describe('tile tokens', () => {
  let s: TestServer;
  let key: { id: string; key: string };
  beforeAll(async () => {
    s = await startServer({ auth: { jwt_secret: JWT_SECRET } }, { clock });
    key = s.key();
  });
  afterAll(() => s?.close());

  it('mints an opaque base64url token that expires 24 h later and opens the tile family', async () => {
    const r = await fetch(s.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key.key } });
    const { data } = (await r.json()) as { data: { token: string; expires_at: string } };
    expect(data.token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Date.parse(data.expires_at) - clock.t).toBeGreaterThan(24 * 3600 * 1000 - 2000);
    expect(Date.parse(data.expires_at) - clock.t).toBeLessThanOrEqual(24 * 3600 * 1000);
    for (const path of [
      '/maps/v1/style/svc',
      '/maps/v1/sprites/svc.json',
      '/maps/v1/glyphs/Noto%20Sans%20Regular/0-255.pbf',
    ]) {
      expect((await s.get(`${path}?t=${data.token}`)).status, path).toBe(200);
    }
  });

  it('answers AUTH_REQUIRED, INVALID_TOKEN and TOKEN_EXPIRED in the envelope on binary routes', async () => {
    const tile = '/maps/v1/tiles/1/0/0.png';
    const anon = await s.get(tile);
    expect(anon.status).toBe(401);
    expect(await errorCode(anon)).toBe('AUTH_REQUIRED');
    const token = await mint(s, { 'X-API-Key': key.key });
    const flipped = token.slice(0, -2) + (token.endsWith('AA') ? 'BB' : 'AA');
    expect(await errorCode(await s.get(`${tile}?t=${flipped}`))).toBe('INVALID_TOKEN');
    expect(await errorCode(await s.get(`${tile}?t=garbage`))).toBe('INVALID_TOKEN');
    const secret = readSecret(join(s.dataDir, 'tile-token.secret'));
    if (!secret.ok) throw new Error(secret.reason);
    const stale = mintTileToken(`mapskey:${key.id}`, Math.floor(clock.t / 1000) - 1, secret.secret);
    expect(await errorCode(await s.get(`${tile}?t=${stale}`))).toBe('TOKEN_EXPIRED');
    const unbound = mintTileToken('service:batch', Math.floor(clock.t / 1000) + 60, secret.secret);
    expect(await errorCode(await s.get(`${tile}?t=${unbound}`))).toBe('TOKEN_NOT_KEY_BOUND');
  });

  it('rejects a token minted from a JWT with TOKEN_NOT_KEY_BOUND', async () => {
    const token = await mint(s, { Authorization: `Bearer ${jwt({ sub: 'driver-1', role: 'user' })}` });
    const r = await s.get(`/maps/v1/sprites/svc.png?t=${token}`);
    expect(r.status).toBe(401);
    expect(await errorCode(r)).toBe('TOKEN_NOT_KEY_BOUND');
  });

  it('stops honouring tokens at once when DELETE /admin/keys/{id} revokes their key', async () => {
    const victim = s.key();
    const token = await mint(s, { 'X-API-Key': victim.key });
    expect((await s.get(`/maps/v1/sprites/svc.json?t=${token}`)).status).toBe(200); // now cached for 30 s
    const admin = s.key({ role: 'super_admin' });
    const del = await fetch(`${s.url}/admin/keys/${victim.id}`, {
      method: 'DELETE',
      headers: { 'X-API-Key': admin.key },
    });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({
      status: 'success',
      data: { revoked: true, key: { id: victim.id, state: 'revoked', active: false } },
    });
    const after = await s.get(`/maps/v1/sprites/svc.json?t=${token}`);
    expect(after.status).toBe(401);
    expect(await errorCode(after)).toBe('API_KEY_REVOKED');
    expect(await errorCode(await s.get('/maps/v1/autocomplete?q=a', { 'X-API-Key': victim.key }))).toBe(
      'INVALID_API_KEY',
    );
  });

  it('restricts /admin to super_admin and reports unknown ids', async () => {
    const user = s.key();
    const del = await fetch(`${s.url}/admin/keys/${user.id}`, { method: 'DELETE', headers: { 'X-API-Key': user.key } });
    expect(del.status).toBe(403);
    expect(await errorCode(del)).toBe('INSUFFICIENT_ROLE');
    const anon = await fetch(`${s.url}/admin/keys/${user.id}`, { method: 'DELETE' });
    expect(await errorCode(anon)).toBe('MISSING_TOKEN');
    const admin = s.key({ role: 'super_admin' });
    const missing = await fetch(`${s.url}/admin/keys/key_0000000000000000`, {
      method: 'DELETE',
      headers: { 'X-API-Key': admin.key },
    });
    expect(missing.status).toBe(404);
    const viaJwt = await fetch(`${s.url}/admin/keys/${user.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${jwt({ sub: 'ops', role: 'super_admin' })}` },
    });
    expect(viaJwt.status).toBe(200);
  });
});

describe('JWT bearer', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ auth: { jwt_secret: JWT_SECRET } }, { clock });
  });
  afterAll(() => s?.close());
  const q = '/maps/v1/autocomplete?q=doha';

  it('accepts a valid HS256 token on JSON endpoints and rejects forged, expired or alg-switched ones', async () => {
    expect((await s.get(q, { Authorization: `Bearer ${jwt({ sub: 'u1' })}` })).status).toBe(200);
    const forged = signJwt(
      { sub: 'u1', exp: Math.floor(clock.t / 1000) + 60 },
      Buffer.from('another-secret-another-secret-xx'),
    );
    expect(await errorCode(await s.get(q, { Authorization: `Bearer ${forged}` }))).toBe('INVALID_TOKEN');
    expect(await errorCode(await s.get(q, { Authorization: `Bearer ${jwt({ sub: 'u1', exp: 1 })}` }))).toBe(
      'TOKEN_EXPIRED',
    );
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"u1","exp":9999999999}').toString('base64url')}.`;
    expect(await errorCode(await s.get(q, { Authorization: `Bearer ${none}` }))).toBe('INVALID_TOKEN');
  });

  it('is not accepted on the tile family', async () => {
    const r = await s.get('/maps/v1/style/svc', { Authorization: `Bearer ${jwt({ sub: 'u1' })}` });
    expect(await errorCode(r)).toBe('AUTH_REQUIRED');
  });

  it('supersedes an older session of the same subject with the flat SESSION_SUPERSEDED shape', async () => {
    const now = Math.floor(clock.t / 1000);
    const old = jwt({ sub: 'rider-9', sid: 'sess-a', iat: now - 100 });
    expect((await s.get(q, { Authorization: `Bearer ${old}` })).status).toBe(200);
    const fresh = jwt({ sub: 'rider-9', sid: 'sess-b', iat: now });
    expect((await s.get(q, { Authorization: `Bearer ${fresh}` })).status).toBe(200);
    const r = await s.get(q, { Authorization: `Bearer ${old}` });
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ status: 'error', code: 'SESSION_SUPERSEDED', message: expect.any(String) });
    expect((await s.get(q, { Authorization: `Bearer ${fresh}` })).status).toBe(200);
  });
});

describe('secrets fail closed', () => {
  it('refuses tile tokens when the secret file is readable by others, and JWTs when no secret is set', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-secret-'));
    const s = await startServer({ data_dir: dataDir });
    const key = s.key();
    const token = await mint(s, { 'X-API-Key': key.key });
    await s.close().catch(() => undefined);
    chmodSync(join(dataDir, 'tile-token.secret'), 0o644);
    const s2 = await startServer({ data_dir: dataDir });
    try {
      const use = await s2.get(`/maps/v1/sprites/svc.json?t=${token}`);
      expect(use.status).toBe(503);
      expect(await errorCode(use)).toBe('MAPS_AUTH_UNAVAILABLE');
      const m = await fetch(s2.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key.key } });
      expect(m.status).toBe(500);
      const body = (await m.json()) as { error: { code: string; details: { request_id: string } } };
      expect(body.error.code).toBe('TILE_TOKEN_FAILED');
      expect(body.error.details.request_id).toBe(m.headers.get('x-request-id'));
      const bearer = await s2.get('/maps/v1/autocomplete?q=a', { Authorization: `Bearer ${jwt({ sub: 'x' })}` });
      expect(await errorCode(bearer)).toBe('MAPS_AUTH_UNAVAILABLE');
    } finally {
      await s2.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
