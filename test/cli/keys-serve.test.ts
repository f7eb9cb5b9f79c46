import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get } from 'node:https';
import Database from 'better-sqlite3';
import { cli, cliProcess, exited, serveProcess as serve } from '../helpers/cli.js';
import { needsSystem } from '../helpers/system.js';

describe('svcmaps keys', () => {
  let data: string;
  beforeAll(() => {
    data = mkdtempSync(join(tmpdir(), 'svcmaps-cli-'));
  });
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('creates a key, prints it once, and never shows it again', async () => {
    const c = await cli(
      'keys',
      'create',
      '--data',
      data,
      '--name',
      'fleet',
      '--plan',
      'pro',
      '--per-minute',
      '120',
      '--daily',
      '5000',
      '--expires-in',
      '30d',
      '--json',
    );
    expect(c.code).toBe(0);
    const k = JSON.parse(c.out);
    expect(k).toMatchObject({
      name: 'fleet',
      plan: 'pro',
      per_minute: 120,
      daily: 5000,
      state: 'active',
      role: 'user',
    });
    expect(k.key).toMatch(/^cmk_live_[A-Za-z0-9_-]{32}$/);
    expect(k.id).toMatch(/^key_[0-9a-f]{16}$/);
    expect(Date.parse(k.expires_at) - Date.now()).toBeGreaterThan(29 * 86400_000);
    const human = await cli('keys', 'create', '--data', data);
    expect(human.out).toMatch(/^cmk_live_\S{32}\n/);
    expect(human.out).toContain('cannot be shown again');

    const list = await cli('keys', 'list', '--data', data);
    expect(list.out).toContain(k.id);
    expect(list.out).not.toContain(k.key);
    const listJson = JSON.parse((await cli('keys', 'list', '--data', data, '--json')).out);
    expect(listJson).toHaveLength(2);
    expect(JSON.stringify(listJson)).not.toContain(k.key);
    const show = JSON.parse((await cli('keys', 'show', k.id, '--data', data, '--json')).out);
    expect(show).not.toHaveProperty('key');
    expect(show.prefix).toBe(k.key.slice(0, 13));

    const rev = await cli('keys', 'revoke', k.id, '--data', data, '--json');
    expect(JSON.parse(rev.out)).toMatchObject({ id: k.id, state: 'revoked', active: false });
    expect(JSON.parse((await cli('keys', 'show', k.id, '--data', data, '--json')).out).revoked_at).toBeTruthy();
  });

  it('reports bad input on stderr in one line with a non-zero exit code', async () => {
    const cases = [
      ['keys', 'show', 'key_0000000000000000', '--data', data],
      ['keys', 'show', 'not-an-id', '--data', data],
      ['keys', 'create', '--data', data, '--expires-in', 'soon'],
      ['keys', 'create', '--data', data, '--role', 'root'],
      ['keys', 'create', '--data', data, '--per-minute', '-3'],
      ['keys', 'revoke', 'key_ffffffffffffffff', '--data', data],
    ];
    for (const args of cases) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.out).toBe('');
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^svcmaps: /);
    }
    const unknown = await cli('keys', 'create', '--bogus');
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain('unknown option');
  });

  it('rejects an invalid config file naming the bad key', async () => {
    const r = await cli(
      'keys',
      'list',
      '--data',
      data,
      '--config',
      join(__dirname, '..', 'fixtures', 'bad-config.json'),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('limits: must NOT have additional properties "per_minite"');
  });
});

describe('svcmaps serve', () => {
  let data: string;
  beforeAll(() => {
    data = mkdtempSync(join(tmpdir(), 'svcmaps-serve-'));
  });
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('creates the data directory on first run and honours keys created and revoked while it runs', async () => {
    const dir = join(data, 'fresh');
    const { proc, url } = await serve(['--data', dir]);
    try {
      expect(statSync(join(dir, 'tile-token.secret')).mode & 0o777).toBe(0o600);
      const db = new Database(join(dir, 'svcmaps.db'), { readonly: true });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      db.close();

      const created = cliProcess('keys', 'create', '--data', dir, '--json');
      expect(created.code).toBe(0);
      const { id, key } = JSON.parse(created.out);
      expect((await fetch(`${url}/maps/v1/autocomplete?q=a`, { headers: { 'X-API-Key': key } })).status).toBe(200);
      expect(cliProcess('keys', 'revoke', id, '--data', dir).code).toBe(0);
      const after = await fetch(`${url}/maps/v1/autocomplete?q=a`, { headers: { 'X-API-Key': key } });
      expect(after.status).toBe(401);
    } finally {
      proc.kill('SIGTERM');
      expect(await exited(proc)).toBe(0);
    }
  });

  it.runIf(needsSystem('openssl', 'openssl', 'the TLS test'))(
    'serves HTTPS natively with --tls-cert/--tls-key',
    async () => {
      const cert = join(data, 'cert.pem');
      const keyFile = join(data, 'key.pem');
      const gen = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          keyFile,
          '-out',
          cert,
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
        ],
        { encoding: 'utf8' },
      );
      expect(gen.status, gen.stderr).toBe(0);
      const { proc, url } = await serve(['--data', join(data, 'tls'), '--tls-cert', cert, '--tls-key', keyFile]);
      try {
        expect(url).toMatch(/^https:/);
        const res = await new Promise<{ status: number; hsts: string; body: string }>((resolve, reject) => {
          get(`${url}/livez`, { rejectUnauthorized: false }, (r) => {
            let body = '';
            r.on('data', (d) => (body += d));
            r.on('end', () =>
              resolve({ status: r.statusCode!, hsts: String(r.headers['strict-transport-security']), body }),
            );
          }).on('error', reject);
        });
        expect(res).toEqual({
          status: 200,
          hsts: 'max-age=31536000; includeSubDomains; preload',
          body: '{"status":"ok"}',
        });
      } finally {
        proc.kill('SIGTERM');
        await exited(proc);
      }
    },
  );

  it('refuses a half TLS configuration and a missing certificate with a one-line error', () => {
    const half = cliProcess('serve', '--port', '0', '--data', join(data, 'x'), '--tls-cert', '/nope.pem');
    expect(half.code).toBe(1);
    expect(half.err).toContain('--tls-cert and --tls-key go together');
    const missing = cliProcess(
      'serve',
      '--port',
      '0',
      '--data',
      join(data, 'x'),
      '--tls-cert',
      '/nope.pem',
      '--tls-key',
      '/nope.key',
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^svcmaps: TLS certificate or key file not found/m);
  });
});
