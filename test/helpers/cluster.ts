import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: under root the server runs as the Debian package's `postgres` user. */
function asPostgres(cmd: string, args: string[]): { status: number | null; out: string } {
  const [file, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(file, argv, { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** A throwaway PostgreSQL: initdb in a temp directory, trust auth for the `svcmaps` superuser, a free port. */
export class TestPostgres {
  readonly dir: string;
  port = 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'svcmaps-pg-'));
    if (isRoot()) chownSync(this.dir, Number(spawnSync('id', ['-u', 'postgres']).stdout), 0);
  }

  get url(): string {
    return `postgres://svcmaps@127.0.0.1:${this.port}/postgres`;
  }

  async init(): Promise<void> {
    const r = asPostgres(`${PG_BIN}/initdb`, [
      '-D',
      join(this.dir, 'data'),
      '-A',
      'trust',
      '-U',
      'svcmaps',
      '--no-sync',
    ]);
    if (r.status !== 0) throw new Error(`initdb failed: ${r.out}`);
    this.port = await freePort();
    this.start();
  }

  start(): void {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const args = ['-D', join(this.dir, 'data'), '-o', opts, '-l', join(this.dir, 'log'), '-w', 'start'];
    const r = asPostgres(`${PG_BIN}/pg_ctl`, args);
    if (r.status !== 0) throw new Error(`postgres did not start: ${r.out}`);
  }

  stop(): void {
    asPostgres(`${PG_BIN}/pg_ctl`, ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  destroy(): void {
    this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A throwaway redis-server: no persistence, a temp directory, a free port. */
export class TestRedis {
  readonly dir = mkdtempSync(join(tmpdir(), 'svcmaps-redis-'));
  port = 0;
  private proc: ChildProcess | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    const proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--save', '', '--appendonly', 'no', '--dir', this.dir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      proc.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${out}`));
      });
    });
    proc.stdout.resume();
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
