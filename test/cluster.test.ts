import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startServer, errorCode, type TestServer } from './helpers/app.js';
import { needsSystem } from './helpers/system.js';
import { PG_BIN, TestPostgres, TestRedis } from './helpers/cluster.js';
import { signJwt } from '../src/auth/jwt.js';
import { verifyTileToken } from '../src/auth/tile-token.js';
import { cliWithEnv, serveProcess, exited } from './helpers/cli.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const hasPg = needsSystem('postgresql', `${PG_BIN}/postgres`, 'cluster tests (PostgreSQL)');
const hasRedis = needsSystem('redis-server', 'redis-server', 'cluster tests (Redis)');

const JSON_PATH = '/maps/v1/autocomplete?q=amman';
const JWT_SECRET = 'jwt-secret-for-cluster-tests-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns true; resolves with the milliseconds it took, or -1 after `limitMs`. */
async function within(limitMs: number, probe: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < limitMs) {
    if (await probe()) return Date.now() - t0;
    await sleep(25);
  }
  return -1;
}

describe.runIf(hasPg && hasRedis)('two nodes sharing PostgreSQL and Redis', () => {
  const postgres = new TestPostgres();
  const redis = new TestRedis();
  let a: TestServer;
  let b: TestServer;
  let admin: string;

  const adminCall = (s: TestServer, method: string, path: string, body?: unknown) =>
    fetch(s.url + path, {
      method,
      headers: { 'X-API-Key': admin, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function createKey(on: TestServer, body: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
    const r = await adminCall(on, 'POST', '/admin/keys', { plan: 'test', ...body });
    expect(r.status).toBe(200);
    const k = ((await r.json()) as { data: { key: { id: string; key: string } } }).data.key;
    return { id: k.id, key: k.key };
  }

  /** Runs `fn` with a client of the test PostgreSQL, closed afterwards. */
  async function withPg<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  /** The number a `SELECT ... AS n` query returns once it reaches `want` (polled for 20 s), or the last one read. */
  const settledCount = (sql: string, params: unknown[], want: number) =>
    withPg(async (client) => {
      let n = 0;
      await within(20_000, async () => {
        n = Number((await client.query<{ n: string }>(sql, params)).rows[0]!.n);
        return n === want;
      });
      return n;
    });

  beforeAll(async () => {
    await postgres.init();
    await redis.start();
    // poll_ms well above 1 s: a revocation seen within 1 s on the other node came through Redis pub/sub.
    const cluster = { postgres_url: postgres.url, redis_url: redis.url, poll_ms: 1500 };
    // Static maps are stubbed: every one is a miss against the key's daily quota, at no drawing cost.
    const staticMaps = { render: async () => Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex') };
    a = await startServer({ cluster, auth: { jwt_secret: JWT_SECRET } }, { staticMaps });
    b = await startServer({ cluster, auth: { jwt_secret: JWT_SECRET } }, { staticMaps });
    const k = await a.app.services.keys.create({ plan: 'ops', role: 'super_admin', perMinute: 100_000, daily: 1e9 });
    admin = k.key;
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis.destroy();
    postgres.destroy();
  });

  it('reports both shared stores in /healthz', async () => {
    for (const s of [a, b]) {
      const h = (await (await s.get('/healthz')).json()) as Record<string, unknown>;
      expect(h).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
    }
  });

  it('a key created on A works on B at once', async () => {
    const count = async (s: TestServer) =>
      ((await (await adminCall(s, 'GET', '/admin/status')).json()) as { data: { store: { keys: number } } }).data.store
        .keys;
    const before = await count(b);
    const { key } = await createKey(a);
    expect((await b.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
    expect((await a.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
    // /admin/status counts the cluster's keys (PostgreSQL), not the node's own SQLite store
    expect(await count(b)).toBe(before + 1);
  });

  it('a key revoked on A is refused on B before B polls PostgreSQL again (Redis pub/sub), on JSON endpoints and the tile family', async () => {
    const { id, key } = await createKey(a);
    // B here reads the key table at start and then once a minute: a revocation it applies before that came through
    // Redis pub/sub (the test's timeout is half that minute).
    const observer = await startServer({
      cluster: { postgres_url: postgres.url, redis_url: redis.url, poll_ms: 60_000 },
      auth: { jwt_secret: JWT_SECRET },
    });
    try {
      const mint = await fetch(observer.url + '/maps/v1/tile-token', {
        method: 'POST',
        headers: { 'X-API-Key': key },
      });
      const token = ((await mint.json()) as { data: { token: string } }).data.token;
      const sprite = `/maps/v1/sprites/svc.json?t=${token}`;
      // B holds the key's state in memory on every path before the revocation.
      expect((await observer.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
      expect((await observer.get('/maps/v1/sprites/svc.json', { 'X-API-Key': key })).status).toBe(200);
      expect((await observer.get(sprite)).status).toBe(200);

      expect((await adminCall(a, 'DELETE', `/admin/keys/${id}`)).status).toBe(200);
      const refused = (path: string, headers: Record<string, string> = {}) =>
        within(20_000, async () => (await observer.get(path, headers)).status === 401);
      expect(await refused(JSON_PATH, { 'X-API-Key': key })).toBeGreaterThanOrEqual(0);
      expect(await refused('/maps/v1/sprites/svc.json', { 'X-API-Key': key })).toBeGreaterThanOrEqual(0);
      expect(await refused(sprite)).toBeGreaterThanOrEqual(0);
      expect(await errorCode(await observer.get(sprite))).toBe('API_KEY_REVOKED');
      expect(await errorCode(await observer.get(JSON_PATH, { 'X-API-Key': key }))).toBe('INVALID_API_KEY');
    } finally {
      await observer.close();
    }
  });

  it('a tile token minted on one node is accepted on the other; revoking its key stops it on both', async () => {
    const { id, key } = await createKey(a);
    const mint = async (on: TestServer) => {
      const r = await fetch(on.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key } });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { token: string } }).data.token;
    };
    const fromA = await mint(a);
    const fromB = await mint(b);
    for (const [on, token] of [
      [b, fromA],
      [a, fromB],
      [a, fromA],
    ] as const)
      expect((await on.get(`/maps/v1/sprites/svc.json?t=${token}`)).status).toBe(200);
    // One secret, kept in PostgreSQL: the first node's own, offered when the cluster had none.
    await withPg(async (client) => {
      const r = await client.query<{ value: string }>("SELECT value FROM settings WHERE name = 'tile_token_secret'");
      expect(r.rows).toHaveLength(1);
      const own = [a, b].map((s) => readFileSync(join(s.dataDir, 'tile-token.secret'), 'utf8').trim());
      expect(own).toContain(r.rows[0]!.value);
    });
    expect((await adminCall(a, 'DELETE', `/admin/keys/${id}`)).status).toBe(200);
    for (const on of [a, b]) {
      const ms = await within(
        20_000,
        async () => (await on.get(`/maps/v1/sprites/svc.json?t=${fromA}`)).status === 401,
      );
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(await errorCode(await on.get(`/maps/v1/sprites/svc.json?t=${fromB}`))).toBe('API_KEY_REVOKED');
    }
  });

  it('cluster.tile_token_secret, when set, is the secret a node signs with', async () => {
    const secret = 'ab'.repeat(32);
    const c = await startServer({ cluster: { postgres_url: postgres.url, tile_token_secret: secret } });
    try {
      const { key } = await createKey(a);
      const r = await fetch(c.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key } });
      const token = ((await r.json()) as { data: { token: string } }).data.token;
      expect(verifyTileToken(token, Buffer.from(secret, 'hex'), Math.floor(Date.now() / 1000)).keyId).toMatch(/^key_/);
      expect((await c.get(`/maps/v1/sprites/svc.json?t=${token}`)).status).toBe(200);
      // A node on the PostgreSQL secret does not accept it: the operator sets the secret on every node or on none.
      expect(await errorCode(await a.get(`/maps/v1/sprites/svc.json?t=${token}`))).toBe('INVALID_TOKEN');
    } finally {
      await c.close();
    }
  });

  it('a per-minute limit of N hit alternately on A and B lets at most N through', async () => {
    const n = 10;
    const { key } = await createKey(a, { per_minute: n });
    const statuses: number[] = [];
    for (let i = 0; i < 3 * n; i++) statuses.push((await (i % 2 ? b : a).get(JSON_PATH, { 'X-API-Key': key })).status);
    const passed = statuses.filter((s) => s === 200).length;
    expect(passed).toBeLessThanOrEqual(n);
    expect(passed).toBeGreaterThanOrEqual(n / 2); // a whole window (or most of one, across a minute boundary)
    expect(statuses.filter((s) => s === 429).length).toBe(3 * n - passed);
    const denied = await a.get(JSON_PATH, { 'X-API-Key': key });
    expect(denied.status).toBe(429);
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('a JWT session opened on B supersedes an older one used on A', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = (claims: Record<string, unknown>) =>
      `Bearer ${signJwt({ sub: 'rider-7', exp: now + 3600, ...claims }, Buffer.from(JWT_SECRET))}`;
    const old = jwt({ sid: 'sess-a', iat: now - 100 });
    expect((await a.get(JSON_PATH, { Authorization: old })).status).toBe(200);
    expect((await b.get(JSON_PATH, { Authorization: jwt({ sid: 'sess-b', iat: now }) })).status).toBe(200);
    const r = await a.get(JSON_PATH, { Authorization: old });
    expect(r.status).toBe(401);
    expect(await errorCode(r)).toBe('SESSION_SUPERSEDED');
  });

  it('records JWT sessions in PostgreSQL, which decides supersede while Redis is down', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = (sub: string, claims: Record<string, unknown>) =>
      `Bearer ${signJwt({ sub, exp: now + 3600, ...claims }, Buffer.from(JWT_SECRET))}`;
    // The sessions of the test above, seen with Redis up, are in PostgreSQL too (written off the request path).
    await withPg(async (client) => {
      const rows = async (sub: string) =>
        (await client.query<{ sid: string }>('SELECT sid FROM jwt_sessions WHERE sub = $1 ORDER BY sid', [sub])).rows;
      expect(await within(20_000, async () => (await rows('rider-7')).length === 2)).toBeGreaterThanOrEqual(0);
      expect(await rows('rider-7')).toEqual([{ sid: 'sess-a' }, { sid: 'sess-b' }]);

      await redis.stop();
      try {
        const old = jwt('rider-9', { sid: 'sess-old', iat: now - 100 });
        expect((await a.get(JSON_PATH, { Authorization: old })).status).toBe(200);
        expect((await b.get(JSON_PATH, { Authorization: jwt('rider-9', { sid: 'sess-new', iat: now }) })).status).toBe(
          200,
        );
        const r = await a.get(JSON_PATH, { Authorization: old });
        expect(r.status).toBe(401);
        expect(await errorCode(r)).toBe('SESSION_SUPERSEDED');
        expect(await rows('rider-9')).toEqual([{ sid: 'sess-new' }, { sid: 'sess-old' }]);
      } finally {
        await redis.start();
      }
      const back = await within(20_000, async () => {
        const [ha, hb] = await Promise.all([a.get('/healthz'), b.get('/healthz')]);
        return ha.status === 200 && hb.status === 200;
      });
      expect(back).toBeGreaterThanOrEqual(0);
    });
  }, 30_000);

  it('svcmaps keys create|list|show|revoke work against the cluster store', async () => {
    const env = { SVCMAPS_CLUSTER__POSTGRES_URL: postgres.url, SVCMAPS_CLUSTER__REDIS_URL: redis.url };
    const data = mkdtempSync(join(tmpdir(), 'svcmaps-cli-'));
    try {
      const created = await cliWithEnv(env, 'keys', 'create', '--name', 'from-cli', '--data', data, '--json');
      expect(created.code).toBe(0);
      const k = JSON.parse(created.out) as { id: string; key: string };
      expect((await a.get(JSON_PATH, { 'X-API-Key': k.key })).status).toBe(200);
      expect((await b.get(JSON_PATH, { 'X-API-Key': k.key })).status).toBe(200);
      const list = JSON.parse((await cliWithEnv(env, 'keys', 'list', '--data', data, '--json')).out) as {
        id: string;
      }[];
      expect(list.map((x) => x.id)).toContain(k.id);
      const show = JSON.parse((await cliWithEnv(env, 'keys', 'show', k.id, '--data', data, '--json')).out);
      expect(show).toMatchObject({ id: k.id, name: 'from-cli', state: 'active' });
      expect((await cliWithEnv(env, 'keys', 'revoke', k.id, '--data', data, '--json')).code).toBe(0);
      const ms = await within(20_000, async () => (await b.get(JSON_PATH, { 'X-API-Key': k.key })).status === 401);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect((await a.get(JSON_PATH, { 'X-API-Key': k.key })).status).toBe(401);
      const missing = await cliWithEnv(env, 'keys', 'show', 'key_0000000000000000', '--data', data);
      expect(missing.code).not.toBe(0);
      // `svcmaps status` counts the cluster's keys, not the (empty) data directory's store
      const all = JSON.parse((await cliWithEnv(env, 'keys', 'list', '--data', data, '--json')).out) as {
        state: string;
      }[];
      const status = await cliWithEnv(env, 'status', '--data', data, '--url', a.url, '--json');
      expect(status.code).toBe(0);
      expect((JSON.parse(status.out) as { store: unknown }).store).toMatchObject({
        keys: all.length,
        active_keys: all.filter((x) => x.state === 'active').length,
      });
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 30_000);

  it("svcmaps cluster migrate copies a single node's keys and today's usage into PostgreSQL", async () => {
    const single = await startServer(); // one node on its own SQLite store
    const env = { SVCMAPS_CLUSTER__POSTGRES_URL: postgres.url, SVCMAPS_CLUSTER__REDIS_URL: redis.url };
    try {
      const k = single.key();
      const revoked = single.key();
      single.app.services.keyAdmin.revoke(revoked.id);
      for (let i = 0; i < 3; i++) expect((await single.get(JSON_PATH, { 'X-API-Key': k.key })).status).toBe(200);
      single.app.meter.flush();
      const first = await cliWithEnv(env, 'cluster', 'migrate', '--data', single.dataDir, '--json');
      expect(first.code).toBe(0);
      // The cluster had a tile-token secret already (its nodes made it): it keeps it.
      expect(JSON.parse(first.out)).toMatchObject({ keys_added: 2, usage_rows: 1, tile_token_secret: 'kept' });
      // The same key, revoked or not, on both cluster nodes.
      expect((await b.get(JSON_PATH, { 'X-API-Key': k.key })).status).toBe(200);
      expect(await errorCode(await a.get(JSON_PATH, { 'X-API-Key': revoked.key }))).toBe('INVALID_API_KEY');
      const again = await cliWithEnv(env, 'cluster', 'migrate', '--data', single.dataDir, '--json');
      expect(JSON.parse(again.out)).toMatchObject({ keys_added: 0 });
      const usage = await (await adminCall(a, 'GET', '/admin/usage')).json();
      const row = usage.data.keys.find((x: any) => x.id === k.id);
      expect(row.buckets.gather.requests).toBeGreaterThanOrEqual(3); // copied once, not twice
      expect(row.buckets.gather.requests).toBeLessThan(6);
    } finally {
      await single.close();
    }
  }, 30_000);

  it('a node killed with -9 does not disturb the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-node-c-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ cluster: { postgres_url: postgres.url, redis_url: redis.url } }));
    const c = await serveProcess(['--data', join(dir, 'data'), '--config', config]);
    try {
      const { key } = await createKey(a, { per_minute: 1000 });
      expect((await fetch(c.url + JSON_PATH, { headers: { 'X-API-Key': key } })).status).toBe(200);
      c.proc.kill('SIGKILL');
      await exited(c.proc);
      for (let i = 0; i < 4; i++) expect((await (i % 2 ? b : a).get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
      const { id, key: other } = await createKey(b);
      expect((await a.get(JSON_PATH, { 'X-API-Key': other })).status).toBe(200);
      expect((await adminCall(b, 'DELETE', `/admin/keys/${id}`)).status).toBe(200);
      expect(
        await within(20_000, async () => (await a.get(JSON_PATH, { 'X-API-Key': other })).status === 401),
      ).toBeGreaterThanOrEqual(0);
    } finally {
      if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('meters both nodes into one daily usage table', async () => {
    const { id, key } = await createKey(a);
    for (let i = 0; i < 3; i++) {
      expect((await a.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
      expect((await b.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
    }
    expect(await settledCount('SELECT COALESCE(SUM(requests), 0) AS n FROM usage WHERE key_id = $1', [id], 6)).toBe(6);
    // Every node's usage, from any node and from the CLI, read from PostgreSQL: the nodes' own SQLite stores have none.
    for (const s of [a, b]) {
      const local = s.app.db.prepare('SELECT COUNT(*) AS n FROM usage WHERE key_id = ?').get(id) as { n: number };
      expect(local.n).toBe(0);
      const usage = await (await adminCall(s, 'GET', '/admin/usage')).json();
      expect(usage.data.keys.find((k: any) => k.id === id).buckets.gather.requests).toBe(6);
    }
    const env = { SVCMAPS_CLUSTER__POSTGRES_URL: postgres.url, SVCMAPS_CLUSTER__REDIS_URL: redis.url };
    const q = await cliWithEnv(env, 'quotas', '--key', id, '--json', '--data', b.dataDir);
    expect(q.code).toBe(0);
    expect(JSON.parse(q.out).keys[0]).toMatchObject({ id, requests: 6 });
    // The table form lists every key of the cluster, the one created on A included.
    const table = await cliWithEnv(env, 'quotas', '--data', b.dataDir);
    expect(table.code).toBe(0);
    expect(table.out).toContain(id);
  });

  const STATICMAP = '/maps/v1/staticmap?path=31.95,35.91,31.96,35.92';

  it('a daily quota of N hit alternately on A and B lets exactly N through', async () => {
    const daily = 5;
    const { id, key } = await createKey(a, { daily });
    const statuses: number[] = [];
    // Back to back, no pause for the meters to flush: the decision is Redis's, not each node's view of PostgreSQL.
    for (let i = 0; i < 4 * daily; i++) {
      const r = await (i % 2 ? b : a).get(STATICMAP, { 'X-API-Key': key });
      statuses.push(r.status);
      if (r.status !== 200) {
        expect(r.status).toBe(429);
        expect(await errorCode(r)).toBe('MAPS_QUOTA_EXCEEDED');
        expect(r.headers.get('retry-after')).toBe('3600');
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(daily);
    expect(statuses.slice(0, daily).every((s) => s === 200)).toBe(true);
    // PostgreSQL stays the durable record: every admitted miss lands there.
    const misses = "SELECT COALESCE(SUM(misses), 0) AS n FROM usage WHERE key_id = $1 AND bucket = 'tiles'";
    expect(await settledCount(misses, [id], daily)).toBe(daily);
  });

  it('a daily quota of N holds under concurrent requests on both nodes', async () => {
    const daily = 6;
    const { key } = await createKey(a, { daily });
    const all = await Promise.all(
      Array.from({ length: 4 * daily }, (_, i) => (i % 2 ? b : a).get(STATICMAP, { 'X-API-Key': key })),
    );
    expect(all.filter((r) => r.status === 200)).toHaveLength(daily);
    expect(all.filter((r) => r.status === 429)).toHaveLength(3 * daily);
  });

  it('requests that are not misses (empty query, 400) give their quota unit back', async () => {
    const daily = 2;
    const { key } = await createKey(a, { daily });
    const h = { 'X-API-Key': key };
    for (let i = 0; i < 3; i++)
      for (const s of [a, b]) {
        expect((await s.get('/maps/v1/autocomplete?q=', h)).status).toBe(200);
        expect((await s.post('/maps/v1/geocode', {}, h)).status).toBe(400);
      }
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? b : a).get(JSON_PATH, h)).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
  });

  it('with Redis stopped a daily quota falls back to the metered count, and Redis resumes from that count', async () => {
    const daily = 3;
    const { key } = await createKey(a, { daily });
    await redis.stop();
    try {
      let passed = 0;
      for (let i = 0; i < 8; i++) {
        const r = await (i % 2 ? b : a).get(STATICMAP, { 'X-API-Key': key });
        expect([200, 429]).toContain(r.status); // a Redis fault never turns into a refusal or a 5xx by itself
        if (r.status === 200) passed++;
        else expect(await errorCode(r)).toBe('MAPS_QUOTA_EXCEEDED');
        await sleep(150); // the nodes learn each other's misses from PostgreSQL at their flushes
      }
      // Without Redis each node learns the other's misses at its next flush: at most one more per other node.
      expect(passed).toBeGreaterThanOrEqual(daily);
      expect(passed).toBeLessThanOrEqual(daily + 1);
    } finally {
      await redis.start();
    }
    const back = await within(20_000, async () => {
      const [ha, hb] = await Promise.all([a.get('/healthz'), b.get('/healthz')]);
      return ha.status === 200 && hb.status === 200;
    });
    expect(back).toBeGreaterThanOrEqual(0);
    // The restarted Redis knows nothing of today, but each node raises the counter to its metered count first.
    for (const s of [a, b, a, b]) {
      const r = await s.get(STATICMAP, { 'X-API-Key': key });
      expect(r.status).toBe(429);
      expect(await errorCode(r)).toBe('MAPS_QUOTA_EXCEEDED');
    }
  }, 30_000);

  it('keeps serving with Redis stopped (limits fail open) and counts again when it returns', async () => {
    const { key } = await createKey(a, { per_minute: 2 });
    await redis.stop();
    for (let i = 0; i < 6; i++) expect((await (i % 2 ? b : a).get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
    const h = (await (await a.get('/healthz')).json()) as Record<string, unknown>;
    expect(h.postgres).toBe('ok');
    expect(h.redis).not.toBe('ok');
    // A revocation still reaches the other node, through its PostgreSQL poll.
    const other = await createKey(a);
    expect((await b.get(JSON_PATH, { 'X-API-Key': other.key })).status).toBe(200);

    await redis.start();
    const back = await within(20_000, async () => {
      const hb = (await (await b.get('/healthz')).json()) as Record<string, unknown>;
      const ha = (await (await a.get('/healthz')).json()) as Record<string, unknown>;
      return ha.redis === 'ok' && hb.redis === 'ok';
    });
    expect(back).toBeGreaterThanOrEqual(0);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? b : a).get(JSON_PATH, { 'X-API-Key': key })).status);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2);
  }, 30_000);

  it('answers key checks 503 MAPS_AUTH_UNAVAILABLE with PostgreSQL stopped, and recovers without a restart', async () => {
    const { key } = await createKey(a);
    expect((await b.get(JSON_PATH, { 'X-API-Key': key })).status).toBe(200);
    postgres.stop();
    const downMs = await within(30_000, async () => (await b.get(JSON_PATH, { 'X-API-Key': key })).status === 503);
    expect(downMs).toBeGreaterThanOrEqual(0);
    for (const s of [a, b]) {
      // each node finds PostgreSQL gone at its own next poll: wait for this one too
      expect(
        await within(30_000, async () => (await s.get(JSON_PATH, { 'X-API-Key': key })).status === 503),
      ).toBeGreaterThanOrEqual(0);
      const r = await s.get(JSON_PATH, { 'X-API-Key': key });
      expect(r.status).toBe(503);
      expect(await errorCode(r)).toBe('MAPS_AUTH_UNAVAILABLE');
      const tile = await s.get('/maps/v1/sprites/svc.json', { 'X-API-Key': key });
      expect(tile.status).toBe(503);
      const h = await s.get('/healthz');
      expect(h.status).toBe(503);
      expect(((await h.json()) as { postgres: string }).postgres).not.toBe('ok');
    }
    postgres.start();
    const upMs = await within(30_000, async () => (await a.get(JSON_PATH, { 'X-API-Key': key })).status === 200);
    expect(upMs).toBeGreaterThanOrEqual(0);
    expect(
      await within(20_000, async () => (await b.get(JSON_PATH, { 'X-API-Key': key })).status === 200),
    ).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('starts a node while PostgreSQL is down: live, key checks 503, and it recovers on its own', async () => {
    const { key } = await createKey(a);
    const mint = await fetch(a.url + '/maps/v1/tile-token', { method: 'POST', headers: { 'X-API-Key': key } });
    const sprite = `/maps/v1/sprites/svc.json?t=${((await mint.json()) as { data: { token: string } }).data.token}`;
    postgres.stop();
    let pgUp = false;
    let c: TestServer | undefined;
    try {
      // Started while PostgreSQL is down, and it comes back only further on: a start that waited for it would never
      // have ended.
      c = await startServer({ cluster: { postgres_url: postgres.url, redis_url: redis.url } });
      expect(pgUp).toBe(false);
      expect((await c.get('/livez')).status).toBe(200);
      const h = await c.get('/healthz');
      expect(h.status).toBe(503);
      const hb = (await h.json()) as Record<string, unknown>;
      expect(hb).toMatchObject({ status: 'degraded', redis: 'ok' });
      expect(typeof hb.postgres).toBe('string');
      expect(hb.postgres).not.toBe('ok');
      // Fail closed: never a 200 (nor a 401) from a key store that was never read.
      for (const path of [JSON_PATH, '/maps/v1/sprites/svc.json']) {
        const r = await c.get(path, { 'X-API-Key': key });
        expect(r.status).toBe(503);
        expect(await errorCode(r)).toBe('MAPS_AUTH_UNAVAILABLE');
      }
      // Nor a tile token: the shared secret is unread, and no per-node secret stands in for it (fail closed).
      const t = await c.get(sprite);
      expect(t.status).toBe(503);
      expect(await errorCode(t)).toBe('MAPS_AUTH_UNAVAILABLE');
      // The CLI does not wait: it says PostgreSQL is unavailable and exits non-zero.
      const env = { SVCMAPS_CLUSTER__POSTGRES_URL: postgres.url, SVCMAPS_CLUSTER__REDIS_URL: redis.url };
      const cli = await cliWithEnv(env, 'keys', 'list', '--data', c.dataDir, '--json');
      expect(cli.code).not.toBe(0);
      expect(cli.err).toMatch(/PostgreSQL unavailable/);

      postgres.start();
      pgUp = true;
      const node = c;
      const upMs = await within(30_000, async () => (await node.get(JSON_PATH, { 'X-API-Key': key })).status === 200);
      expect(upMs).toBeGreaterThanOrEqual(0);
      const after = await c.get('/healthz');
      expect(after.status).toBe(200);
      expect(await after.json()).toMatchObject({ status: 'ok', postgres: 'ok', redis: 'ok' });
      expect((await c.get('/maps/v1/sprites/svc.json', { 'X-API-Key': key })).status).toBe(200);
      expect((await c.get(sprite)).status).toBe(200); // A's token, on the secret C read once PostgreSQL was back
    } finally {
      if (!pgUp) postgres.start(); // for whatever runs after a failure here
      await c?.close();
    }
  }, 120_000);
});
