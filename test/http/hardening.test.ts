import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startServer, errorCode, type TestServer } from '../helpers/app.js';
import { signJwt } from '../../src/auth/jwt.js';
import { tileToken } from '../helpers/tiles.js';
import { CLI, cli, exited, serveProcess } from '../helpers/cli.js';

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

describe('one server per data directory', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-lock-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `svcmaps serve` expecting it to refuse: its exit code and stderr (killed after 15 s if it starts instead). */
  const refused = (args: string[]) =>
    new Promise<{ code: number | null; err: string; out: string }>((resolve) => {
      const p = spawn(process.execPath, [...CLI, 'serve', ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SVCMAPS_DATA: '' },
      });
      let err = '';
      let out = '';
      p.stderr.on('data', (d) => (err += d));
      p.stdout.on('data', (d) => (out += d));
      const t = setTimeout(() => p.kill('SIGKILL'), 15_000);
      p.on('exit', (code) => {
        clearTimeout(t);
        resolve({ code, err, out });
      });
    });

  it('a second serve on the same data directory refuses with one line naming the running pid', async () => {
    const data = join(dir, 'same');
    const first = await serveProcess(['--data', data]);
    try {
      const pidFile = readFileSync(join(data, 'svcmaps.pid'), 'utf8');
      const port = new URL(first.url).port;
      // Two at once: another port, and the same port (refused for the directory before it tries the port).
      const [second, samePort] = await Promise.all([
        refused(['--data', data, '--port', '0']),
        refused(['--data', data, '--port', port]),
      ]);
      expect(second.code).toBe(1);
      expect(second.err).toMatch(
        new RegExp(`^svcmaps: data directory .* is in use by svcmaps server pid ${first.proc.pid}\\b.*\\n$`),
      );
      expect(second.out).toBe('');
      expect(samePort.err).toMatch(/in use by svcmaps server pid/);
      // The refused servers left the pid file alone and the first still answers.
      expect(readFileSync(join(data, 'svcmaps.pid'), 'utf8')).toBe(pidFile);
      expect((await fetch(`${first.url}/livez`)).status).toBe(200);
      expect((await cli('status', '--data', data, '--json')).out).toContain(`"pid_alive":true`);
    } finally {
      first.proc.kill('SIGTERM');
      await exited(first.proc);
    }
  }, 60_000);

  it('a second serve on another data directory but the same port fails to bind with a clear message', async () => {
    const first = await serveProcess(['--data', join(dir, 'a')]);
    try {
      const port = new URL(first.url).port;
      const second = await refused(['--data', join(dir, 'b'), '--port', port, '--host', '127.0.0.1']);
      expect(second.code).toBe(1);
      // One line among the log lines (which the asynchronous logger may write before or after it).
      expect(second.err).toMatch(new RegExp(`^svcmaps: cannot listen on 127\\.0\\.0\\.1:${port}: .*in use.*$`, 'm'));
      expect((await fetch(`${first.url}/livez`)).status).toBe(200);
    } finally {
      first.proc.kill('SIGTERM');
      await exited(first.proc);
    }
  }, 60_000);

  it('after kill -9 of the server a new serve starts on the same directory and port', async () => {
    const data = join(dir, 'crash');
    const first = await serveProcess(['--data', data]);
    const port = new URL(first.url).port;
    first.proc.kill('SIGKILL');
    await exited(first.proc);
    const next = await serveProcess(['--data', data, '--port', port]);
    try {
      expect(next.url).toBe(first.url);
      expect((await fetch(`${next.url}/livez`)).status).toBe(200);
      expect(JSON.parse(readFileSync(join(data, 'svcmaps.pid'), 'utf8')).pid).toBe(next.proc.pid);
    } finally {
      next.proc.kill('SIGTERM');
      expect(await exited(next.proc)).toBe(0);
    }
  }, 60_000);
});

/** Sends raw bytes in one write; resolves with the status line and body, or '' when the server closed without one. */
function rawRequest(url: string, raw: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const sock = connect(Number(port), hostname);
    let got = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (got += d));
    const done = () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : 0, body: got.split('\r\n\r\n').slice(1).join('\r\n\r\n') });
    };
    sock.on('close', done);
    sock.on('error', () => undefined);
    sock.write(raw);
    setTimeout(() => sock.end(), 2000);
  });
}

describe('URL and header limits', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.close());
  const head = (target: string, headers: string[] = []) =>
    `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers.map((h) => h + '\r\n').join('')}\r\n`;

  it('answers 414 URI_TOO_LONG past 8 KiB of URL and serves one just inside the limit', async () => {
    const long = await rawRequest(s.url, head(`/maps/v1/staticmap?path=${'31.9,35.9,'.repeat(1000)}`));
    expect(long.status).toBe(414);
    expect(JSON.parse(long.body)).toMatchObject({ error: { code: 'URI_TOO_LONG' } });
    const longPath = await rawRequest(s.url, head(`/maps/v1/place/${'a'.repeat(9000)}`));
    expect(longPath.status).toBe(414);
    const inside = await rawRequest(s.url, head(`/livez?pad=${'a'.repeat(8000)}`));
    expect(inside.status).toBe(200);
  });

  it('answers 431 HEADERS_TOO_LARGE past 8 KiB of header fields or 40 fields', async () => {
    const big = await rawRequest(s.url, head('/livez', [`X-Big: ${'b'.repeat(9000)}`]));
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toMatchObject({ error: { code: 'HEADERS_TOO_LARGE' } });
    const spread = await rawRequest(
      s.url,
      head(
        '/livez',
        Array.from({ length: 30 }, (_, i) => `X-H${i}: ${'c'.repeat(300)}`),
      ),
    );
    expect(spread.status).toBe(431);
    const many = await rawRequest(
      s.url,
      head(
        '/livez',
        Array.from({ length: 42 }, (_, i) => `X-H${i}: v`),
      ),
    );
    expect(many.status).toBe(431);
    const fine = await rawRequest(
      s.url,
      head(
        '/livez',
        Array.from({ length: 30 }, (_, i) => `X-H${i}: ${'d'.repeat(200)}`),
      ),
    );
    expect(fine.status).toBe(200);
  });

  it('beyond what the HTTP layer parses (280 kB URL, 300 headers of 200 bytes) the server survives', async () => {
    // The bundled uWebSockets.js build closes these connections itself before the app sees a request (limits
    // compiled in, see the README); whatever it does, it must never answer a 5xx or take the server down.
    for (const raw of [
      head(`/maps/v1/staticmap?path=${'31.9,35.9,'.repeat(28_000)}`),
      head(
        '/livez',
        Array.from({ length: 300 }, (_, i) => `X-H${i}: ${'e'.repeat(200)}`),
      ),
    ]) {
      const r = await rawRequest(s.url, raw);
      expect([0, 414, 431]).toContain(r.status);
    }
    expect((await s.get('/livez')).status).toBe(200);
  });
});
