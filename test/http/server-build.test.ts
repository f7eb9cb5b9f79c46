import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

describe('the HTTP server build', () => {
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-uws-'));
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('refuses to serve on the uWebSockets.js JavaScript fallback with one line saying why, instead of failing later', () => {
    const r = spawnSync(process.execPath, [...CLI, 'serve', '--port', '0', '--data', data], {
      encoding: 'utf8',
      env: { ...process.env, SVCMAPS_DATA: '', UWS_USE_FALLBACK: '1' },
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/svcmaps: the HTTP server \(uWebSockets\.js\) loaded its JavaScript fallback.*Node 20/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
