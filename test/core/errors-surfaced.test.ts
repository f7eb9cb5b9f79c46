import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RuleTester } from 'eslint';
import { createRequire } from 'node:module';
import tseslint from 'typescript-eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import noSilentCatch from '../../eslint-rules/no-silent-catch.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import type { SessionGuard } from '../../src/auth/sessions.js';
import { AppError } from '../../src/core/errors.js';
import { repeatingLog, type Logger } from '../../src/core/log.js';
import { Pipeline } from '../../src/http/pipeline.js';
import type { HttpReply, HttpRequest, RequestHandler } from '../../src/http/types.js';
import { listen } from '../../src/http/uws/server.js';
import { placesImporter } from '../../src/import/places-importer.js';
import { Pool } from '../../src/limits/pool.js';
import { inspectDataDir } from '../../src/ops/status.js';
import { GRAPH_FILE } from '../../src/routing/graph.js';
import { decodeLeg } from '../../src/routing/answer/route-record.js';
import {
  openRedis,
  redisFaultCounts,
  redisFaultKind,
  RedisFaults,
  runScript,
  luaScript,
  type RedisClient,
} from '../../src/store/redis/client.js';
import { RedisSlidingWindow } from '../../src/store/redis/limiter.js';
import { TestRedis } from '../helpers/cluster.js';
import { withoutGazetteer } from '../helpers/gazetteer.js';
import { needsSystem } from '../helpers/system.js';

/** A logger that keeps every line, for tests to read. */
function capturing(): Logger & { lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const redisLib = () => createRequire(import.meta.url)('redis') as typeof import('redis');

describe('the no-silent-catch lint rule', () => {
  RuleTester.describe = describe;
  RuleTester.it = it;
  RuleTester.itOnly = it.only;
  const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });
  tester.run('no-silent-catch', noSilentCatch, {
    valid: [
      'try { f(); } catch (e) { throw e; }',
      'try { f(); } catch (e) { log.warn("f failed", { error: e.message }); }',
      'try { f(); } catch { this.o.log.error("f failed"); }',
      'try { f(); } catch (e) { console.error(e); }',
      'try { f(); } catch (e) { metrics.failures.inc(); }',
      'try { f(); } catch (e) { reportFailure(); }',
      'try { f(); } catch (e) { return { error: e }; }',
      'try { f(); } catch (e) { this.lastError = (e as Error).message; }',
      'try { f(); } catch (e) { const msg = (e as Error).message; fails.push(msg); }',
      'try { f(); } catch (e) { if (isErrno(e, "ENOENT")) return undefined; throw e; }',
      'p.catch((e) => reject(e));',
      'p.catch((e: Error) => log.warn("x", { error: e.message }));',
      'p.catch((e) => callback(e));',
      'p.catch(reject);',
      'p.then(ok, (e) => resolve({ error: e }));',
      'p.then(reply, fail);',
      'p.then((v) => v);', // no rejection handler: nothing caught
      // the escape hatch: the catch tests for the one error it expects, and says why it needs no trace
      `try { f(); } catch (e) {
        // expected: a missing file is an empty list
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      }`,
    ],
    invalid: [
      { code: 'try { f(); } catch {}', errors: [{ messageId: 'silent' }] },
      { code: 'try { f(); } catch { /* nothing to do */ }', errors: [{ messageId: 'silent' }] },
      { code: 'try { f(); } catch (e) { return undefined; }', errors: [{ messageId: 'silent' }] },
      { code: 'try { f(); } catch (e) { return (e as X).code === "EPERM"; }', errors: [{ messageId: 'silent' }] },
      { code: 'try { f(); } catch (e) { if (isMissing(e)) return; }', errors: [{ messageId: 'silent' }] },
      { code: 'p.catch(() => undefined);', errors: [{ messageId: 'silent' }] },
      { code: 'p.catch(() => {});', errors: [{ messageId: 'silent' }] },
      { code: 'p.catch(function () { return null; });', errors: [{ messageId: 'silent' }] },
      { code: 'p.then(ok, () => undefined);', errors: [{ messageId: 'silent' }] },
      { code: 'p.catch(noop);', errors: [{ messageId: 'silentRef' }] },
      // the hatch needs the catch to look at the error it expects
      { code: 'try { f(); } catch { /* expected: never fails */ }', errors: [{ messageId: 'expectedWithoutTest' }] },
      { code: 'p.catch(() => undefined); // expected: whatever', errors: [{ messageId: 'silent' }] },
      { code: 'p.catch(() => { /* expected: anything */ });', errors: [{ messageId: 'expectedWithoutTest' }] },
    ],
  });
});

describe('errors that used to vanish', () => {
  it('a background job (directions prefetch) that throws is logged and counted by its pool', async () => {
    const log = capturing();
    const pool = new Pool('prefetch', 1, 0, 'DIRECTIONS_BACKPRESSURE', log);
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    expect(
      pool.tryStart(async () => {
        try {
          throw new TypeError('leg has no end');
        } finally {
          setImmediate(done);
        }
      }),
    ).toBe(true);
    await finished;
    expect(pool.failed).toBe(1);
    expect(pool.active).toBe(0); // the slot is free again
    const line = log.lines.find((l) => l.msg === 'background job failed')!;
    expect(line.level).toBe('error');
    expect(line.fields.pool).toBe('prefetch');
    expect(String(line.fields.error)).toMatch(/TypeError: leg has no end\n\s+at /); // with its stack

    // a refusal the job met is an info line, counted too
    const refused = new Promise<void>((r) => (done = r));
    pool.tryStart(async () => {
      setImmediate(done);
      throw new AppError('DIRECTIONS_UNROUTABLE');
    });
    await refused;
    expect(pool.failed).toBe(2);
    expect(log.lines.at(-1)).toMatchObject({ level: 'info', fields: { code: 'DIRECTIONS_UNROUTABLE' } });
  });

  it('a repeating fault is written once, then at most once per interval, carrying how many were not', () => {
    const log = capturing();
    let now = 0;
    const line = repeatingLog(log, 'error', 'store failed', 10_000, () => now);
    line({ error: 'a' });
    now = 5000;
    line({ error: 'b' });
    line({ error: 'c' });
    expect(log.lines.length).toBe(1);
    now = 10_000;
    line({ error: 'd' });
    expect(log.lines.map((l) => l.fields)).toEqual([{ error: 'a' }, { error: 'd', repeated: 2 }]);
  });

  describe('a Redis command that fails', () => {
    const { ErrorReply, ClientClosedError } = redisLib();
    const fake = (fail: (cmd: string[]) => unknown) =>
      ({
        isReady: true,
        sendCommand: (cmd: string[]) => Promise.resolve().then(() => fail(cmd)),
      }) as unknown as RedisClient;
    const script = luaScript('test', 'return 1');

    it('tells a script or command error from Redis being out of reach', () => {
      expect(redisFaultKind(new ErrorReply('ERR Error running script: attempt to call a nil value'))).toBe('command');
      expect(redisFaultKind(new ErrorReply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
        'command',
      );
      expect(redisFaultKind(new ErrorReply('NOSCRIPT No matching script'))).toBe('command');
      expect(redisFaultKind(Object.assign(new Error('ERR unknown command'), { name: 'ReplyError' }))).toBe('command');
      expect(redisFaultKind(new TypeError("Cannot read properties of null (reading '0')"))).toBe('command'); // parse
      expect(redisFaultKind(new ClientClosedError())).toBe('connection');
      expect(redisFaultKind(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
        'connection',
      );
      expect(redisFaultKind(new ErrorReply('LOADING Redis is loading the dataset in memory'))).toBe('connection');
      expect(redisFaultKind(new ErrorReply('BUSY Redis is busy running a script'))).toBe('connection');
    });

    it('logs a script error at error level and counts it apart from connection failures; both fail open', async () => {
      const log = capturing();
      const faults = new RedisFaults(log);
      const before = { ...redisFaultCounts };
      // EVALSHA finds no script, the EVAL that follows fails inside the script
      const sent: string[] = [];
      const broken = fake((cmd) => {
        sent.push(cmd[0]!);
        throw new ErrorReply(cmd[0] === 'EVALSHA' ? 'NOSCRIPT No matching script' : 'ERR user_script:1: bad');
      });
      expect(await runScript(broken, faults, script, ['0'], 60_000, () => 'parsed')).toBeUndefined();
      expect(sent).toEqual(['EVALSHA', 'EVAL']);
      expect(redisFaultCounts.command).toBe(before.command + 1);
      expect(redisFaultCounts.connection).toBe(before.connection);
      expect(log.lines).toEqual([
        {
          level: 'error',
          msg: 'redis command failed: a script or command error; limits fail open',
          fields: { command: 'script test', error: 'ERR user_script:1: bad' },
        },
      ]);

      const gone = fake(() => {
        throw new ClientClosedError();
      });
      expect(await runScript(gone, faults, script, ['0'], 60_000, () => 'parsed')).toBeUndefined();
      expect(redisFaultCounts.connection).toBe(before.connection + 1);
      expect(redisFaultCounts.command).toBe(before.command + 1);
      expect(log.lines.filter((l) => l.level === 'error').length).toBe(1); // no error line for an outage

      // a reply the parser cannot read is a bug too
      const odd = fake(() => null);
      const parse = (r: unknown) => (r as number[])[0];
      expect(await runScript(odd, faults, script, ['0'], 60_000, parse)).toBeUndefined();
      expect(redisFaultCounts.command).toBe(before.command + 2);
    });

    const hasRedis = needsSystem('redis-server', 'redis-server', 'Redis script error test');
    describe.runIf(hasRedis)('on a real redis-server', () => {
      const redis = new TestRedis();
      let client: RedisClient;
      const log = capturing();
      beforeAll(async () => {
        await redis.start();
        client = openRedis(redis.url, log, 'commands');
        await client.connect();
      });
      afterAll(async () => {
        if (client.isOpen) client.destroy();
        await redis.destroy();
      });

      it('a WRONGTYPE inside the limiter script is an error line and a command fault, then Redis down is not', async () => {
        const limiter = new RedisSlidingWindow(client, new RedisFaults(log));
        expect((await limiter.hit('fine', 5))?.allowed).toBe(true);
        // a key of the wrong type under the limiter's name: the script's HMGET fails with WRONGTYPE inside Redis
        await client.set('svcmaps:rl:wrong', 'a string');
        const before = { ...redisFaultCounts };
        expect(await limiter.hit('wrong', 5)).toBeUndefined(); // fails open
        expect(redisFaultCounts.command).toBe(before.command + 1);
        const line = log.lines.find((l) => l.level === 'error')!;
        expect(line.fields.command).toBe('script sliding-window');
        expect(String(line.fields.error)).toMatch(/WRONGTYPE/);
        expect(log.lines.some((l) => /unreachable/.test(l.msg))).toBe(false); // not taken for Redis being down

        // Redis going away is the client's warning, not an error line or a command fault
        await redis.stop();
        while (client.isReady) await new Promise((r) => setTimeout(r, 10));
        expect(await limiter.hit('fine', 5)).toBeUndefined();
        expect(redisFaultCounts.command).toBe(before.command + 1);
        expect(log.lines.filter((l) => l.level === 'error').length).toBe(1);
        expect(log.lines.some((l) => l.level === 'warn' && /redis unreachable/.test(l.msg))).toBe(true);
      });
    });
  });

  it('a shared key store that fails a read-through is logged; the key check that follows decides', async () => {
    const log = capturing();
    const auth = new Authenticator({
      keys: {
        findByHash: () => undefined,
        findById: () => undefined,
        dataVersion: () => 0,
        loadByHash: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
      },
      sharedStore: true,
      sessions: {} as SessionGuard,
      tileTokenTtlS: 600,
      keyCacheTtlS: 30,
      jwtPerMinute: 60,
      jwtDaily: 1000,
      nowS: () => 1_800_000_000,
      log,
    });
    await auth.prepare({ apiKey: `cmk_live_${'a'.repeat(32)}` });
    expect(log.lines).toEqual([
      {
        level: 'warn',
        msg: 'shared auth store read failed',
        fields: { read: 'key', error: 'connect ECONNREFUSED 127.0.0.1:5432' },
      },
    ]);
  });

  it("the HTTP adapter's last-resort 500 logs the error's stack, and its body says nothing of it", async () => {
    const failed: unknown[] = [];
    const handler: RequestHandler = {
      handle: (req: HttpRequest): HttpReply | Promise<HttpReply> => {
        if (req.path === '/sync') throw new Error('handler bug (sync)');
        return Promise.reject(new Error('handler bug (async)'));
      },
      fail: (_req, code, error) => {
        failed.push(error);
        return { status: 500, headers: { 'Content-Type': 'text/plain' }, body: code };
      },
      bodyLimitBytes: 1024,
      requestTimeoutMs: 60_000,
    };
    const server = await listen(handler, { host: '127.0.0.1', port: 0 });
    try {
      for (const path of ['/sync', '/async']) {
        const res = await fetch(server.url + path);
        expect(res.status).toBe(500);
        expect(await res.text()).toBe('INTERNAL_ERROR');
      }
      expect(failed.map((e) => (e as Error).stack)).toEqual([
        expect.stringMatching(/^Error: handler bug \(sync\)\n\s+at /),
        expect.stringMatching(/^Error: handler bug \(async\)\n\s+at /),
      ]);
    } finally {
      server.close();
    }
  });

  it("the pipeline logs a transport failure's stack at error level, and an urgency check that throws", () => {
    const log = capturing();
    const router = {
      match: () => ({
        route: {
          urgent: () => {
            throw new Error('isHot bug');
          },
        },
        params: {},
      }),
    };
    const pipeline = new Pipeline({ log, router, corsOrigins: [] } as unknown as ConstructorParameters<
      typeof Pipeline
    >[0]);
    const req = { method: 'GET', path: '/x', requestId: 'r1', headers: {}, query: new URLSearchParams(), ip: '' };
    expect(pipeline.urgent(req)).toBe(false);
    expect(log.lines[0]).toMatchObject({ level: 'error', msg: 'urgency check failed', fields: { request_id: 'r1' } });
    expect(String(log.lines[0]!.fields.error)).toMatch(/^Error: isHot bug\n\s+at /);

    const reply = pipeline.fail(req, 'INTERNAL_ERROR', new Error('adapter bug'));
    expect(reply.status).toBe(500);
    expect(String(reply.body)).not.toMatch(/adapter bug/);
    expect(log.lines[1]).toMatchObject({ level: 'error', msg: 'request failed in transport' });
    expect(String(log.lines[1]!.fields.error)).toMatch(/^Error: adapter bug\n\s+at /);
    pipeline.fail(req, 'REQUEST_TIMEOUT');
    expect(log.lines[2]).toMatchObject({ level: 'warn', fields: { code: 'REQUEST_TIMEOUT' } });
  });

  it('a cached route leg that is not one decodes to nothing, whatever its header holds', () => {
    const leg = (header: string, tail = '') => {
      const h = Buffer.from(header);
      const b = Buffer.alloc(4 + h.length + tail.length);
      b.writeUInt32LE(h.length, 0);
      h.copy(b, 4);
      b.write(tail, 4 + h.length);
      return b;
    };
    expect(decodeLeg(Buffer.alloc(2))).toBeUndefined();
    expect(decodeLeg(leg('{"engine":'))).toBeUndefined();
    expect(decodeLeg(leg('null'))).toBeUndefined();
    expect(decodeLeg(leg('{"engine":"builtin","paths":[null]}'))).toBeUndefined();
    expect(decodeLeg(leg('{"engine":"builtin","paths":{}}'))).toBeUndefined();
    expect(decodeLeg(leg('{"engine":"builtin","paths":[{"bytes":2,"label":"x"}]}', '{}'))).toEqual({
      engine: 'builtin',
      paths: [{ label: 'x', json: Buffer.from('{}') }],
    });
  });

  it('a damaged GeoJSON line costs its feature and is counted in the import summary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-damaged-'));
    withoutGazetteer(dir); // what is counted is the import's own lines; the gazetteer would only be carried over
    try {
      const cafe = (id: number) =>
        JSON.stringify({
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [35.93, 31.95] },
          properties: { '@id': `node/${id}`, name: `Cafe ${id}`, amenity: 'cafe' },
        });
      const file = join(dir, 'places.geojsonl');
      writeFileSync(file, [cafe(1), '{"type":"Feature","geometry":', cafe(2), ''].join('\n'));
      const summary = await placesImporter.run(file, dir, () => {}, new AbortController().signal);
      expect(summary.counts.damaged_lines).toBe(1);
      expect(Object.entries(summary.counts).filter(([k]) => k !== 'damaged_lines')).toEqual([['poi', 2]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a road graph that cannot be read is described by why, not as if it had no header', () => {
    const root = mkdtempSync(join(tmpdir(), 'svcmaps-status-'));
    try {
      mkdirSync(join(root, GRAPH_FILE)); // opens, but reading it fails (EISDIR)
      expect(inspectDataDir(root).roads?.unreadable).toMatch(/EISDIR/);
      rmSync(join(root, GRAPH_FILE), { recursive: true });
      writeFileSync(join(root, GRAPH_FILE), 'not a graph');
      expect(inspectDataDir(root).roads?.unreadable).toBeUndefined(); // no graph header: just described by size
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
