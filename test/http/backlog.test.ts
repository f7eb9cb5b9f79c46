import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { Backlog } from '../../src/http/uws/backlog.js';
import { silentLogger } from '../../src/core/log.js';
import type { TileService } from '../../src/tiles/types.js';
import { startServer, type TestServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';

const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('request backlog (unit)', () => {
  // A clock the test moves: what a request costs is what the test says, whatever else the machine runs.
  let clock = 1000;
  const cost = (ms: number) => (clock += ms);

  it('lets a turn run requests for one slice, then queues them in arrival order', async () => {
    const b = new Backlog(4, () => clock);
    expect(b.busy()).toBe(false); // the turn's first request
    cost(2);
    expect(b.busy()).toBe(false); // within the slice
    cost(3);
    expect(b.busy()).toBe(true); // the slice is spent
    const order: number[] = [];
    for (let i = 0; i < 5; i++) b.defer(() => order.push(i));
    expect(b.size).toBe(5);
    await nextTurn();
    await nextTurn();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(b.size).toBe(0);
    await nextTurn();
    expect(b.busy()).toBe(false); // a new turn starts a new slice
  });

  it('queues behind what is already queued, even in a fresh turn', async () => {
    const b = new Backlog(4, () => clock);
    b.defer(() => undefined);
    expect(b.busy()).toBe(true);
    await nextTurn();
    await nextTurn();
    expect(b.busy()).toBe(false);
  });

  it('yields to the event loop between slices, and a failing entry does not stop the queue (and is logged)', async () => {
    const logged: Array<[string, Record<string, unknown> | undefined]> = [];
    const log = { ...silentLogger, error: (msg: string, f?: Record<string, unknown>) => void logged.push([msg, f]) };
    const b = new Backlog(4, () => clock, log);
    const events: string[] = [];
    b.defer(() => {
      setImmediate(() => events.push('io'));
      throw new Error('boom');
    });
    for (let i = 0; i < 6; i++)
      b.defer(() => {
        cost(3);
        events.push(`r${i}`);
      });
    while (b.size > 0) await nextTurn();
    await nextTurn();
    // Two entries fill a 4 ms slice; what the loop queued meanwhile runs before the rest of the backlog.
    expect(events.filter((e) => e.startsWith('r'))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(events.indexOf('io')).toBeGreaterThan(0);
    expect(events.indexOf('io')).toBeLessThan(events.indexOf('r5'));
    expect(logged).toEqual([['queued request failed', { error: expect.stringMatching(/^Error: boom\n\s+at /) }]]);
  });
});

interface Done {
  path: string;
  status: number;
  at: number;
}

/** A GET over its own connection, read to the end; `at` is when the answer completed. */
function rawGet(port: number, path: string): Promise<Done> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1');
    sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0);
      resolve({ path, status, at: performance.now() });
    });
  });
}

describe('a burst of costly requests on the real app', () => {
  let s: TestServer;
  let port: number;
  let t: string;
  // Every cold tile costs 3 ms of event-loop time before it answers (what auth, limits, a store lookup and admission
  // cost a real burst together); z3 tiles are in memory.
  const costly: TileService = {
    tile: async (r) => {
      if (r.z === 3) return { bytes: PNG_1x1, source: 'memory' };
      spin(3);
      return { bytes: PNG_1x1, source: 'fresh' };
    },
    isHot: (r) => r.z === 3,
  };
  beforeAll(async () => {
    s = await startServer({ limits: { tile_ip_per_minute: 1_000_000 } }, { tiles: costly });
    port = Number(new URL(s.url).port);
    t = await tileToken(s);
  });
  afterAll(() => s?.close());

  it('/livez and a hot tile sent during the burst answer long before it is worked off, and the burst is served', async () => {
    const N = 120;
    const burst = Array.from({ length: N }, (_, i) => rawGet(port, `/maps/v1/tiles/14/${8000 + i}/5000.png?t=${t}`));
    // Sent once the server has begun on the burst; without time slices its whole batch (~360 ms) ran first.
    await new Promise((r) => setTimeout(r, 5));
    const probes = [rawGet(port, '/livez'), rawGet(port, `/maps/v1/tiles/3/4/3.png?t=${t}`)];
    const [answers, [livez, hot]] = await Promise.all([Promise.all(burst), Promise.all(probes)]);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(livez!.status).toBe(200);
    expect(hot!.status).toBe(200);
    const before = (p: Done) => answers.filter((a) => a.at < p.at).length;
    const seen = `burst answers before /livez: ${before(livez!)}, before the hot tile: ${before(hot!)} of ${N}`;
    expect(before(livez!), seen).toBeLessThan(N / 2);
    expect(before(hot!), seen).toBeLessThan(N / 2);
  });
});
