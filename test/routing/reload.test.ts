import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/app.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

describe('road graph reload', () => {
  let dir: string;
  let s: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-roads-reload-'));
    s = await startServer({ data_dir: dir });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the degraded line before an import and real routes after reload(), without a restart', async () => {
    const H = { 'X-API-Key': s.key().key };
    const body = { origin_lat: 43.7384, origin_lng: 7.4246, dest_lat: 43.745, dest_lng: 7.433 };
    const before = await (await s.post('/maps/v1/directions', body, H)).json();
    expect(before.data.source).toBe('server_straight');
    await roadsImporter.run(MONACO_PBF, dir, () => undefined, new AbortController().signal);
    const results = await s.app.reload();
    expect(results.find((r) => r.name === 'roads')).toMatchObject({ ok: true });
    const after = await (await s.post('/maps/v1/directions', body, H)).json();
    expect(after.data).toMatchObject({ source: 'fresh', engine: 'svc' });
    expect(after.data.routes[0].maneuvers.length).toBeGreaterThan(1);
  });
});
