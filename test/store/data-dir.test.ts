import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cli } from '../helpers/cli.js';
import { startPlacesServer } from '../helpers/app.js';
import { MONACO_PBF } from '../helpers/fixtures.js';
import { regionalGazetteer } from '../helpers/gazetteer.js';
import { SECRET_FILE } from '../../src/store/data-dir.js';

const CASINO = '/maps/v1/autocomplete?q=Casino&lat=43.739&lng=7.427';
// Two points in Monaco on the imported road graph: Monte-Carlo (casino) and Fontvieille.
const ROUTE = { origin_lat: 43.7396, origin_lng: 7.4276, dest_lat: 43.7305, dest_lng: 7.4189 };

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe('a prepared data directory carried to another path serves as it is', () => {
  let base: string;
  let prepared: string;
  let carried: string;
  let key: string;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'svcmaps-carry-'));
    prepared = join(base, 'prepared', 'data');
    carried = join(base, 'field', 'svcmaps-data');
    // Prepare: import Monaco (places, roads, render), create a key, store a tile, seed a polygon. The places are
    // imported beside the gazetteer's places of Monaco, not all 200,000 (the import rebuilds the search index over
    // every carried place).
    await regionalGazetteer(prepared, ['mc']);
    const imp = await cli('import', MONACO_PBF, '--data', prepared, '--json');
    expect(imp.code, imp.err).toBe(0);
    const s = await startPlacesServer(prepared);
    key = s.key({ name: 'field' }).key;
    expect((await s.get('/maps/v1/tiles/12/2132/1493.png', { 'X-API-Key': key })).status).toBe(200);
    await s.close();
    const polygon = join(base, 'monaco-area.geojson');
    writeFileSync(
      polygon,
      JSON.stringify({
        type: 'Polygon',
        coordinates: [
          [
            [7.4, 43.72],
            [7.44, 43.72],
            [7.44, 43.75],
            [7.4, 43.75],
            [7.4, 43.72],
          ],
        ],
      }),
    );
    const seed = await cli('seed', '--data', prepared, '--polygon', polygon, '--zoom', '10', '--json');
    expect(seed.code, seed.err).toBe(0);
    // Carry: a plain recursive copy to another place (as scp -r or a USB stick would), then the original goes away.
    mkdirSync(dirname(carried), { recursive: true });
    const cp = spawnSync('cp', ['-r', prepared, carried], { encoding: 'utf8' });
    expect(cp.status, cp.stderr).toBe(0);
    rmSync(join(base, 'prepared'), { recursive: true, force: true });
    rmSync(polygon);
  }, 240_000);

  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('names no path of the machine it was prepared on', () => {
    const found = files(carried).filter((f) => {
      const bytes = readFileSync(f);
      return [prepared, base, dirname(MONACO_PBF)].some((p) => bytes.includes(p));
    });
    expect(found).toEqual([]);
  });

  it('keeps the tile-token secret at mode 0600', () => {
    expect(statSync(join(carried, SECRET_FILE)).mode & 0o777).toBe(0o600);
  });

  it('serves search and directions from the copy with the keys made before the move', async () => {
    const s = await startPlacesServer(carried);
    try {
      const H = { 'X-API-Key': key };
      const ac = await s.get(CASINO, H);
      expect(ac.status).toBe(200);
      const pred = ((await ac.json()) as { data: { predictions: Array<{ name: string; address: string }> } }).data
        .predictions[0]!;
      expect(pred.name).toMatch(/Casino/);
      expect(pred.address).toMatch(/Monaco/);
      const dir = await s.post('/maps/v1/directions', ROUTE, H);
      expect(dir.status).toBe(200);
      const d = ((await dir.json()) as { data: { source: string; partial?: boolean; distance_m?: number } }).data;
      expect(d.source).not.toBe('server_straight'); // routed on the imported graph, not the degraded line
      expect(d.partial).toBeFalsy();
      expect((await s.get('/maps/v1/tiles/12/2132/1493.png', H)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('svcmaps status on the copy lists what it holds', async () => {
    const r = await cli('status', '--data', carried, '--json', '--url', 'http://127.0.0.1:9');
    expect(r.code).toBe(3); // no server up: the data directory is still described
    const j = JSON.parse(r.out);
    expect(j.data_dir).toBe(carried);
    expect(j.store).toMatchObject({ keys: 1, active_keys: 1 });
    expect(j.places.sources.map((x: { source: string }) => x.source)).toContain('osm:monaco.osm.pbf');
    expect(j.roads).toMatchObject({ source: 'monaco.osm.pbf' });
    expect(j.roads.nodes).toBeGreaterThan(1000);
    expect(j.render.meta).toMatchObject({ source: 'monaco.osm.pbf' });
    expect(j.tiles[0].zooms.map((z: { z: number }) => z.z)).toEqual(expect.arrayContaining([10, 12]));
  });
});
