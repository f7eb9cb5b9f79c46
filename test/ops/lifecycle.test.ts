import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, exited, serveProcess as serve } from '../helpers/cli.js';
import { regionalGazetteer } from '../helpers/gazetteer.js';
import { spawn } from 'node:child_process';
import { lockDataDir } from '../../src/store/server-lock.js';

describe('reload without a restart', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-reload-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGHUP through `svcmaps reload` picks up a newly imported places source', async () => {
    const data = join(dir, 'data');
    // The gazetteer's places of Jordan (what the self-test searches), not all 200,000: the import below carries them
    // over and rebuilds the search index, and the self-test copies the index.
    await regionalGazetteer(data, ['jo']);
    const { proc, url } = await serve(['--data', data]);
    try {
      const pid = JSON.parse(readFileSync(join(data, 'svcmaps.pid'), 'utf8'));
      expect(pid).toMatchObject({ pid: proc.pid, url });
      const key = JSON.parse((await cli('keys', 'create', '--data', data, '--json')).out).key as string;
      // The in-process CLI calls between the searches (import, reload) can hold this test's event loop longer
      // than the server's 10 s idle timeout, so the pooled keep-alive socket may already be closed when fetch
      // reuses it: a GET on a reused connection is retried once, as HTTP clients do.
      const get = (u: string) =>
        fetch(u, { headers: { 'X-API-Key': key } }).catch((e: { cause?: { code?: string } }) => {
          if (e.cause?.code !== 'UND_ERR_SOCKET') throw e;
          return fetch(u, { headers: { 'X-API-Key': key } });
        });
      const find = async () => {
        const r = await get(`${url}/maps/v1/autocomplete?q=qwertzu%20vexil`);
        return ((await r.json()) as { data: { predictions: Array<{ name: string }> } }).data.predictions.map(
          (p) => p.name,
        );
      };
      expect(await find()).toEqual([]);

      const file = join(dir, 'one.geojsonl');
      const feature = {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: [35.91, 31.95] },
        properties: { '@id': 'node/987654321', name: 'Qwertzu Vexillary', shop: 'bakery' },
      };
      writeFileSync(file, JSON.stringify(feature) + '\n');
      expect((await cli('import', file, '--data', data, '--only', 'places', '--json')).code).toBe(0);
      expect(await find()).toEqual([]); // imported, not yet loaded

      const r = await cli('reload', '--data', data, '--json');
      expect(r.code, r.err).toBe(0);
      const status = JSON.parse(r.out);
      expect(status).toMatchObject({ pid: proc.pid, ok: true });
      const places = status.results.find((r: { name: string }) => r.name === 'places');
      expect(places).toMatchObject({ ok: true, detail: expect.stringMatching(/^[\d,]+ places \(generation /) });
      expect(status.results.find((r: { name: string }) => r.name === 'roads')?.detail).toMatch(/no road graph/);
      expect(await find()).toEqual(['Qwertzu Vexillary']);

      const human = await cli('reload', '--data', data);
      expect(human.out).toMatch(new RegExp(`^Reloaded server ${proc.pid} \\(${url}\\):\\n  ✓ places`));

      // The self-test copies the live directory (WAL and all) and finds the imported source in its copy too. Its
      // tiles and static map take as long as they need: on a busy machine the render threads' start-up alone can
      // outlast the default tile timeout and static-map wait.
      const patient = join(dir, 'selftest-config.json');
      writeFileSync(
        patient,
        JSON.stringify({ tiles: { timeout_ms: 120_000 }, admission: { staticmap: { wait_ms: 120_000 } } }),
      );
      const st = await cli('selftest', '--data', data, '--config', patient, '--json');
      expect(st.code, st.out).toBe(0);
      expect(JSON.parse(st.out).checks.find((c: { id: string }) => c.id === 'places-imported')).toMatchObject({
        status: 'pass',
        detail: 'found "Qwertzu Vexillary" (osm:one.geojsonl)',
      });
    } finally {
      proc.kill('SIGTERM');
      expect(await exited(proc)).toBe(0);
    }
    expect(existsSync(join(data, 'svcmaps.pid'))).toBe(false);
    const gone = await cli('reload', '--data', data);
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/^svcmaps: no server is running on .*svcmaps\.pid/);
  }, 180_000); // an import, a reload and a self-test on a copy, each a child process: slow on a busy machine

  it('refuses a stale pid file with one line', async () => {
    const data = join(dir, 'stale');
    await cli('keys', 'list', '--data', data);
    writeFileSync(
      join(data, 'svcmaps.pid'),
      JSON.stringify({ pid: 2 ** 22 + 12345, url: 'http://127.0.0.1:1', started_at: '' }),
    );
    const r = await cli('reload', '--data', data);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^svcmaps: stale svcmaps.pid .*not running\n$/);
  });

  it('never signals a live process that is not the server holding the directory (a pid reused after a crash)', async () => {
    const data = join(dir, 'reused');
    await cli('keys', 'list', '--data', data);
    // A server ran here once (its lock file exists) and crashed; its pid now belongs to an unrelated program.
    lockDataDir(data, { pid: 1, started_at: '' }).release();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(
        join(data, 'svcmaps.pid'),
        JSON.stringify({ pid: other.pid, url: 'http://127.0.0.1:1', started_at: '' }),
      );
      const r = await cli('reload', '--data', data);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /^svcmaps: stale svcmaps.pid .*is running but is not a svcmaps server of this directory\n$/,
      );
      await new Promise((res) => setTimeout(res, 200));
      expect(other.exitCode).toBeNull(); // SIGHUP would have ended it
      expect(other.signalCode).toBeNull();
    } finally {
      other.kill('SIGKILL');
    }
  });
});

describe('graceful shutdown', () => {
  // A tile origin that holds its answer until the test lets it go, so a tile request is in flight when SIGTERM
  // arrives, and stays in flight until the server has stopped accepting.
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  let origin: Server;
  let originUrl: string;
  let asked: (answer: () => void) => void;
  /** Resolves, once the origin is asked, with the function that sends its answer. */
  const originAsked = new Promise<() => void>((r) => (asked = r));
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-term-'));
    origin = createServer((_req, res) => asked(() => res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG)));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    origin?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGTERM stops accepting, finishes the in-flight request, then exits 0 and removes the pid file', async () => {
    const data = join(dir, 'data');
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      // the held tile waits for the origin however long the test takes to let it go
      JSON.stringify({
        tiles: { origin: 'xyz', xyz_url: `${originUrl}/{z}/{x}/{y}.png`, store: false, timeout_ms: 120_000 },
      }),
    );
    const { proc, url, log } = await serve(['--data', data, '--config', config]);
    const key = JSON.parse((await cli('keys', 'create', '--data', data, '--json')).out).key as string;
    let answered = false;
    const inFlight = fetch(`${url}/maps/v1/tiles/3/4/2.png`, {
      headers: { 'X-API-Key': key, Connection: 'close' },
    }).finally(() => (answered = true));
    const answer = await originAsked;
    proc.kill('SIGTERM');
    // no longer accepting (once the signal is handled), while the tile request is still in flight
    let refused: unknown;
    for (let i = 0; i < 300 && !refused; i++) {
      refused = await fetch(`${url}/livez`, { headers: { Connection: 'close' } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!refused) await new Promise((r) => setTimeout(r, 100));
    }
    expect(refused).toBeInstanceOf(Error);
    expect(answered).toBe(false);
    answer();
    // the in-flight request is finished with the origin's tile, which came only now
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
    expect(await exited(proc)).toBe(0);
    const lines = log()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM', in_flight: 1 });
    expect(lines.find((l) => l.msg === 'request' && l.route === '/maps/v1/tiles/:z/:x/:y')).toMatchObject({
      status: 200,
      source: 'fresh',
    });
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
    expect(existsSync(join(data, 'svcmaps.pid'))).toBe(false);
    // Metering was flushed after the in-flight request finished, before the store closed.
    const usage = JSON.parse((await cli('quotas', '--data', data, '--json')).out);
    expect(usage.keys[0].buckets.tile_family.requests).toBe(1);
  }, 30_000);
});
