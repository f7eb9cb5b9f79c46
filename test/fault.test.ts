import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { cli, exited, serveProcess } from './helpers/cli.js';

interface Burst {
  /** Arrival times (ms since epoch) of the answers that counted (200). */
  answered: number[];
  stop(): Promise<void>;
}

/** Sends metered requests from `lanes` concurrent loops until stopped or the server goes away. */
function burst(url: string, key: string, lanes = 16): Burst {
  const answered: number[] = [];
  let running = true;
  const lane = async () => {
    while (running) {
      try {
        const r = await fetch(`${url}/maps/v1/autocomplete?q=fault`, { headers: { 'X-API-Key': key } });
        await r.arrayBuffer();
        if (r.status === 200) answered.push(Date.now());
      } catch {
        return; // the server went away
      }
    }
  };
  const all = Promise.all(Array.from({ length: lanes }, lane));
  return {
    answered,
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
    await new Promise((r) => setTimeout(r, 700));
    proc.kill('SIGTERM');
    expect(await exited(proc)).toBe(0);
    await b.stop();
    expect(b.answered.length).toBeGreaterThan(50);
    const after = storeState(data);
    expect(after.integrity).toBe('ok');
    expect(after.metered).toBe(b.answered.length);
  }, 60_000);
});
