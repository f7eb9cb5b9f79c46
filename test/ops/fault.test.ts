import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CLI, cli, exited, serveProcess } from '../helpers/cli.js';

/** Resolves once the process has ended, by exit or by signal (a killed process has exitCode null). */
const ended = (p: ChildProcess) =>
  new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

/** Polls until the condition holds (the burst is under way), at most 30 s. */
async function until(cond: () => boolean) {
  for (let i = 0; i < 600 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
}

interface Burst {
  /** Answers that counted (200) so far. */
  readonly answered: number;
  stop(): Promise<void>;
}

/** Sends metered requests from `lanes` concurrent loops until stopped or the server goes away. */
function burst(url: string, key: string, lanes = 16): Burst {
  let answered = 0;
  let running = true;
  const lane = async () => {
    while (running) {
      try {
        const r = await fetch(`${url}/maps/v1/autocomplete?q=fault`, { headers: { 'X-API-Key': key } });
        await r.arrayBuffer();
        if (r.status === 200) answered++;
      } catch {
        return; // the server went away
      }
    }
  };
  const all = Promise.all(Array.from({ length: lanes }, lane));
  return {
    get answered() {
      return answered;
    },
    async stop() {
      running = false;
      await all;
    },
  };
}

function storeState(data: string) {
  const db = new Database(join(data, 'svcmaps.db'), { readonly: true });
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }) as string,
      metered: (db.prepare('SELECT COALESCE(SUM(requests), 0) AS n FROM usage').get() as { n: number }).n,
      keys: db.prepare('SELECT id, active, revoked_at FROM api_keys ORDER BY id').all() as Array<{
        id: string;
        active: number;
        revoked_at: number | null;
      }>,
    };
  } finally {
    db.close();
  }
}

const createKey = async (data: string) => {
  const r = await cli('keys', 'create', '--data', data, '--json', '--per-minute', '1000000', '--daily', '1000000');
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as { id: string; key: string };
};

describe('metering survives the end of the process', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-fault-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SIGTERM during a metered burst: every answered request is in the store after exit', async () => {
    const data = join(dir, 'term');
    const { proc, url } = await serveProcess(['--data', data]);
    const { key } = await createKey(data);
    const b = burst(url, key);
    await until(() => b.answered >= 100);
    proc.kill('SIGTERM');
    expect(await exited(proc)).toBe(0);
    await b.stop();
    expect(b.answered).toBeGreaterThan(50);
    const after = storeState(data);
    expect(after.integrity).toBe('ok');
    expect(after.metered).toBe(b.answered);
  }, 60_000);
});

describe('kill -9 during a metered burst and key revocations', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-kill-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('restarts with an intact store, keys in their states, and metering lost only within the flush window', async () => {
    const data = join(dir, 'data');
    const first = await serveProcess(['--data', data]);
    const [busy, keepA, revB, revC, revD] = await Promise.all([1, 2, 3, 4, 5].map(() => createKey(data)));
    const b = burst(first.url, busy!.key, 8);
    await until(() => b.answered >= 200);
    // Metering is written in batches, one flush at a time (README: "Security"): a crash loses only what came after
    // the last flush. The test sees a flush happen (the store's count grows between two reads): every answer that
    // arrived before the first read was metered before it, so that flush wrote it, and the kill cannot lose it.
    let flushed = -1;
    for (let i = 0; i < 600 && flushed < 0; i++) {
      const arrived = b.answered;
      const metered = storeState(data).metered;
      await new Promise((r) => setTimeout(r, 50));
      if (storeState(data).metered > metered) flushed = arrived;
    }
    expect(flushed).toBeGreaterThanOrEqual(200);
    // Revocations by other processes; the server is killed the moment the first one reports, so the others are
    // mid-flight, and one revoking process is itself killed at an arbitrary point.
    const revoke = (id: string) =>
      spawn(process.execPath, [...CLI, 'keys', 'revoke', id, '--data', data, '--json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SVCMAPS_DATA: '' },
      });
    const rb = revoke(revB!.id);
    const rc = revoke(revC!.id);
    const rd = revoke(revD!.id);
    await new Promise<void>((resolve) => {
      rb.stdout.once('data', () => {
        first.proc.kill('SIGKILL');
        rd.kill('SIGKILL');
        resolve();
      });
    });
    await ended(first.proc);
    await b.stop();
    expect(await exited(rb)).toBe(0);
    expect(await exited(rc)).toBe(0);
    await ended(rd);

    const after = storeState(data);
    expect(after.integrity).toBe('ok');
    const state = new Map(after.keys.map((k) => [k.id, k]));
    for (const k of [busy!, keepA!]) expect(state.get(k.id)).toMatchObject({ active: 1, revoked_at: null });
    for (const k of [revB!, revC!])
      expect(state.get(k.id)).toMatchObject({ active: 0, revoked_at: expect.any(Number) });
    const d = state.get(revD!.id)!; // killed mid-revoke: either fully revoked or untouched, never half
    expect(d.active === 1 ? d.revoked_at === null : d.revoked_at !== null).toBe(true);

    // Everything answered before the flush the test saw was metered; nothing more than was answered.
    expect(b.answered).toBeGreaterThan(100);
    expect(after.metered).toBeGreaterThanOrEqual(flushed);
    expect(after.metered).toBeLessThanOrEqual(b.answered);

    // The restarted server finds the directory free (no stale lock) and enforces the revocations.
    const next = await serveProcess(['--data', data]);
    try {
      const q = async (key: string) =>
        (await fetch(`${next.url}/maps/v1/autocomplete?q=a`, { headers: { 'X-API-Key': key } })).status;
      expect(await q(busy!.key)).toBe(200);
      expect(await q(keepA!.key)).toBe(200);
      expect(await q(revB!.key)).toBe(401);
      expect(await q(revC!.key)).toBe(401);
      expect(await q(revD!.key)).toBe(d.active === 1 ? 200 : 401);
    } finally {
      next.proc.kill('SIGTERM');
      expect(await exited(next.proc)).toBe(0);
    }
  }, 180_000);
});
