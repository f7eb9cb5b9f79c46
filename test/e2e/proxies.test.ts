import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';
import { needsSystem } from '../helpers/system.js';

/**
 * The shipped deploy/nginx.conf and deploy/haproxy.cfg, run by the real Debian nginx and HAProxy in front of the real
 * app. The files are changed only where their addresses are; each test client connects from its own loopback address
 * (127.0.1.x through nginx, 127.0.2.x through HAProxy) while both proxies reach the app from 127.0.0.1, so the address
 * the app charges for the per-IP tile cap shows whose it is.
 */

// Both programs live in /usr/sbin, which a non-root PATH may lack.
if (!`:${process.env.PATH ?? ''}:`.includes(':/usr/sbin:')) process.env.PATH = `${process.env.PATH ?? ''}:/usr/sbin`;
const haveNginx = needsSystem('nginx-light', 'nginx', 'the nginx reverse-proxy test (test/e2e/proxies.test.ts)');
const haveHaproxy = needsSystem('haproxy', 'haproxy', 'the HAProxy reverse-proxy test (test/e2e/proxies.test.ts)');

const DEPLOY = join(__dirname, '..', '..', 'deploy');
const TILE_IP_LIMIT = 4;
const SPOOFED = '203.0.113.9'; // what a client claims in its own X-Forwarded-For; must never be the address charged

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a fresh connection from a chosen local address (so the proxy sees that address as the client). */
function call(base: string, path: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = request(base + path, { localAddress: from, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('latin1'),
        }),
      );
      res.on('error', reject);
    });
    r.setTimeout(20_000, () => r.destroy(new Error(`${path}: no answer in 20 s`)));
    r.on('error', reject);
    r.end();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The shipped file with each address replaced; every original must occur exactly once, so a drifted file fails. */
function retarget(text: string, swaps: [string, string][]): string {
  for (const [from, to] of swaps) {
    expect(text.split(from).length - 1, `"${from}" in the shipped file`).toBe(1);
    text = text.replace(from, to);
  }
  return text;
}

class Proc {
  readonly output: string[] = [];
  readonly child: ChildProcess;
  constructor(cmd: string, args: string[]) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const s of [this.child.stdout!, this.child.stderr!]) s.on('data', (d: Buffer) => this.output.push(String(d)));
  }
  get log(): string {
    return this.output.join('');
  }
  /** Stops the process this test started (by its pid) and waits for it to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Polls until `ready` answers true (or throws with the process's output). */
async function until(what: string, p: Proc, ready: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${what} exited (${p.child.exitCode}):\n${p.log}`);
    if (await ready().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what} not ready after ${ms} ms:\n${p.log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let app: TestServer;
let key: string;
let token: string;
const tmpDirs: string[] = [];

beforeAll(async () => {
  if (!haveNginx && !haveHaproxy) return;
  app = await startServer({
    http: { trusted_proxy_header: 'X-Forwarded-For', request_timeout_ms: 120_000 },
    limits: { tile_ip_per_minute: TILE_IP_LIMIT },
    tiles: { timeout_ms: 120_000 },
  });
  key = app.key().key;
  token = await tileToken(app);
  // The tile the proxies are asked for, drawn here once (straight from the tile service: no address is charged): the
  // render threads start with it, which on a busy machine takes seconds (hence the patient tile timeout). Through
  // the proxies it comes from memory.
  const drawn = await app.app.services.tiles.tile({ z: 0, x: 0, y: 0, scale: 1, format: 'png', prefetch: false });
  expect(drawn?.source).toBe('fresh');
}, 120_000);
afterAll(async () => {
  await app?.close();
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A connection to the app that sends nothing. The app closes it after its idle timeout (~10 s): the timeout that
 * would end a request the app never answered.
 */
function idleConnection(): Promise<{ closed: () => string | undefined; end: () => void }> {
  return new Promise((resolve, reject) => {
    const c = connect(Number(new URL(app.url).port), '127.0.0.1');
    let closed: string | undefined;
    c.on('error', (e) => (closed = `failed: ${e.message}`));
    c.once('close', () => (closed ??= 'closed by the app'));
    c.once('connect', () => resolve({ closed: () => closed, end: () => c.destroy() }));
    c.once('close', () => reject(new Error(`idle connection to the app: ${closed}`))); // (no effect once connected)
  });
}

/** /livez, a keyed search and a tile through a proxy, each answered at once (HTTP/1.0 to the app would hang ~10 s). */
async function answersThrough(base: string, from: string): Promise<void> {
  // At once, not when the app's idle timeout ends a request it could not read: a connection opened before them and
  // left idle, which that timeout closes, is still open once all three are answered.
  const idle = await idleConnection();
  try {
    await answers(base, from);
    expect(idle.closed()).toBeUndefined();
  } finally {
    idle.end();
  }
}

async function answers(base: string, from: string): Promise<void> {
  const live = await call(base, '/livez', from);
  expect(live.status, live.body).toBe(200);
  expect(JSON.parse(live.body)).toEqual({ status: 'ok' });

  const search = await call(base, '/maps/v1/autocomplete?q=amman', from, { 'X-API-Key': key });
  expect(search.status, search.body).toBe(200);
  expect(JSON.parse(search.body)).toHaveProperty('data.predictions');
  const unkeyed = await call(base, '/maps/v1/autocomplete?q=amman', from);
  expect(unkeyed.status).toBe(401);
  expect(unkeyed.body).toContain('MISSING_TOKEN'); // the app's envelope, passed through unchanged

  const tile = await call(base, `/maps/v1/tiles/0/0/0.png?t=${token}`, from);
  expect(tile.status).toBe(200);
  expect(tile.headers['content-type']).toBe('image/png');
  expect(tile.body.slice(1, 4)).toBe('PNG');
}

/**
 * The per-IP tile cap charges the real client's address: every request claims the same X-Forwarded-For and reaches
 * the app from the proxy's 127.0.0.1, yet two clients get separate budgets and one client's budget runs out alone.
 */
async function capChargesRealClient(base: string, a: string, b: string): Promise<void> {
  const tile = (from: string) =>
    call(base, `/maps/v1/tiles/0/0/0.png?t=${token}`, from, { 'X-Forwarded-For': SPOOFED });
  const first = await tile(a);
  expect(first.status).toBe(200);
  expect(first.headers['ratelimit-remaining']).toBe(String(TILE_IP_LIMIT - 1));
  const statuses = [first.status];
  for (let i = 0; i < TILE_IP_LIMIT; i++) statuses.push((await tile(a)).status);
  expect(statuses).toEqual([...Array<number>(TILE_IP_LIMIT).fill(200), 429]);
  const other = await tile(b); // same proxy, same claimed header, another client: a fresh budget
  expect(other.status).toBe(200);
  expect(other.headers['ratelimit-remaining']).toBe(String(TILE_IP_LIMIT - 1));
}

describe.skipIf(!haveNginx)('behind nginx (deploy/nginx.conf)', () => {
  let nginx: Proc;
  let base: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-nginx-'));
    tmpDirs.push(dir);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const site = retarget(readFileSync(join(DEPLOY, 'nginx.conf'), 'utf8'), [
      ['server 127.0.0.1:8080;', `server 127.0.0.1:${new URL(app.url).port};`],
      ['listen 80;', `listen 127.0.0.1:${port};`],
    ]);
    writeFileSync(join(dir, 'svcmaps-site.conf'), site);
    for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
    // A minimal main config, as /etc/nginx/nginx.conf would be, including the site inside http {}. The temp paths
    // keep nginx out of /var/lib/nginx, which a non-root run cannot write.
    writeFileSync(
      join(dir, 'nginx.conf'),
      [
        'worker_processes 1;',
        'events { worker_connections 256; }',
        'http {',
        '  access_log off;',
        `  client_body_temp_path ${dir}/body;`,
        `  proxy_temp_path ${dir}/proxy;`,
        `  fastcgi_temp_path ${dir}/fastcgi;`,
        `  uwsgi_temp_path ${dir}/uwsgi;`,
        `  scgi_temp_path ${dir}/scgi;`,
        `  include ${dir}/svcmaps-site.conf;`,
        '}',
        '',
      ].join('\n'),
    );
    nginx = new Proc('nginx', [
      '-p',
      dir,
      '-c',
      join(dir, 'nginx.conf'),
      '-e',
      'stderr',
      '-g',
      `daemon off; pid ${dir}/nginx.pid; error_log stderr;`,
    ]);
    await until('nginx', nginx, async () => (await call(base, '/livez', '127.0.0.1')).status === 200);
  });
  afterAll(() => nginx?.stop());

  it('answers /livez, a keyed search and a tile through the shipped site', async () => {
    await answersThrough(base, '127.0.1.1');
    expect(nginx.log).not.toMatch(/upstream prematurely closed|\[(error|crit|alert|emerg)\]/);
  });

  it('charges the per-IP tile cap to the real client, not to nginx or a client-supplied X-Forwarded-For', async () => {
    await capChargesRealClient(base, '127.0.1.2', '127.0.1.3');
  });
});

describe.skipIf(!haveHaproxy)('behind HAProxy (deploy/haproxy.cfg)', () => {
  let haproxy: Proc;
  let base: string;
  let stats: string;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-haproxy-'));
    tmpDirs.push(dir);
    const [port, statsPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    stats = `http://127.0.0.1:${statsPort}/haproxy-stats;csv`;
    let cfg = retarget(readFileSync(join(DEPLOY, 'haproxy.cfg'), 'utf8'), [
      ['bind *:80', `bind 127.0.0.1:${port}`],
      ['server app1 127.0.0.1:8080 ', `server app1 127.0.0.1:${new URL(app.url).port} `],
      ['bind 127.0.0.1:8404', `bind 127.0.0.1:${statsPort}`],
    ]);
    // chroot and the switch to the haproxy user need root; an unprivileged run keeps its own user.
    if (process.getuid?.() !== 0) cfg = cfg.replace(/^\s*(chroot|user|group) .*$/gm, '');
    writeFileSync(join(dir, 'haproxy.cfg'), cfg);
    haproxy = new Proc('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')]); // -db: foreground, despite "daemon"
    await until('haproxy', haproxy, async () => (await call(stats, '', '127.0.0.1')).status === 200);
  });
  afterAll(() => haproxy?.stop());

  it('marks the app UP with the HTTP/1.1 health check on /livez', async () => {
    let row: Record<string, string> = {};
    await until(
      'the HAProxy health check',
      haproxy,
      async () => {
        const [head, ...lines] = (await call(stats, '', '127.0.0.1')).body.trim().split('\n');
        const cols = head!.replace(/^# /, '').split(',');
        const server = lines.map((l) => l.split(',')).find((f) => f[0] === 'svcmaps' && f[1] === 'app1');
        row = Object.fromEntries(cols.map((c, i) => [c, server?.[i] ?? '']));
        return row.check_status === 'L7OK';
      },
      10_000,
    );
    expect(row).toMatchObject({ status: 'UP', check_status: 'L7OK', check_code: '200' });
  });

  it('answers /livez, a keyed search and a tile through the shipped config', async () => {
    await answersThrough(base, '127.0.2.1');
  });

  it('charges the per-IP tile cap to the real client, not to HAProxy or a client-supplied X-Forwarded-For', async () => {
    await capChargesRealClient(base, '127.0.2.2', '127.0.2.3');
  });
});

describe.skipIf(!haveNginx && !haveHaproxy)('the proxies themselves', () => {
  it('were never charged: a direct tile request from their address 127.0.0.1 still has its full budget', async () => {
    const direct = await call(app.url, `/maps/v1/tiles/0/0/0.png?t=${token}`, '127.0.0.1');
    expect(direct.status).toBe(200);
    expect(direct.headers['ratelimit-remaining']).toBe(String(TILE_IP_LIMIT - 1));
  });
});

describe('install.sh --print-nginx', () => {
  const run = (...args: string[]) =>
    spawnSync('bash', [join(__dirname, '..', '..', 'install.sh'), '--print-nginx', ...args], { encoding: 'utf8' });

  it('prints the shipped site pointed at the given port, and installs nothing', () => {
    const data = join(mkdtempSync(join(tmpdir(), 'svcmaps-nginx-')), 'data');
    const r = run('--port', '9090', '--data', data);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      readFileSync(join(__dirname, '..', '..', 'deploy', 'nginx.conf'), 'utf8').replace(
        'server 127.0.0.1:8080;',
        'server 127.0.0.1:9090;',
      ),
    );
    expect(existsSync(data)).toBe(false);
  });

  it('points at 127.0.0.1 for a server listening everywhere, and refuses a bad port', () => {
    expect(run('--host', '0.0.0.0', '--port', '8081').stdout).toContain('server 127.0.0.1:8081;');
    const bad = run('--port', '70000');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ERROR: --port must be 1-65535/);
  });
});
