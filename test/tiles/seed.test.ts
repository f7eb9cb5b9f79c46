import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pointToTile } from '@mapbox/tilebelt';
import { loadImage } from '@napi-rs/canvas';
import { CLI, cli } from '../helpers/cli.js';
import { startServer } from '../helpers/app.js';
import { tileToken } from '../helpers/tiles.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

const BBOX = [7.405, 43.725, 7.44, 43.752] as const;
/** A smaller area for the interruption tests, so resuming stays quick. */
const SMALL = [7.415, 43.728, 7.435, 43.745] as const;

/** Expected XYZ addresses for the bbox, by independent tile math (@mapbox/tilebelt). */
function expected(z: number, b: readonly number[] = BBOX): Set<string> {
  const [x0, y0] = pointToTile(b[0]!, b[3]!, z);
  const [x1, y1] = pointToTile(b[2]!, b[1]!, z);
  const out = new Set<string>();
  for (let x = x0; x <= x1; x++) for (let y = y0; y <= y1; y++) out.add(`${z}/${x}/${y}`);
  return out;
}

/** A plain-SQL MBTiles reader that knows only the MBTiles 1.3 spec: XYZ from TMS rows. */
function readMbtiles(file: string) {
  const db = new Database(file, { readonly: true });
  const meta = Object.fromEntries(
    (db.prepare('SELECT name, value FROM metadata').all() as Array<{ name: string; value: string }>).map((r) => [
      r.name,
      r.value,
    ]),
  );
  const tiles = (
    db.prepare('SELECT zoom_level z, tile_column x, tile_row row, tile_data data FROM tiles').all() as Array<{
      z: number;
      x: number;
      row: number;
      data: Buffer;
    }>
  ).map((t) => ({ key: `${t.z}/${t.x}/${(1 << t.z) - 1 - t.row}`, data: t.data }));
  db.close();
  return { meta, tiles };
}

/** Tiles committed so far (read while a seeder may be writing: WAL lets us). */
function countTiles(file: string): number {
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT COUNT(*) n FROM tiles').get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

describe('svcmaps seed and tiles', () => {
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-seed-'));
  const bbox = BBOX.join(',');
  beforeAll(async () => {
    const imp = await cli('import', MONACO_PBF, '--data', data, '--only', 'render');
    expect(imp.code, imp.err).toBe(0);
  }, 60_000);
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('--dry-run prints per-zoom counts and writes nothing', async () => {
    const r = await cli(
      'seed',
      '--data',
      data,
      '--bbox',
      bbox,
      '--zoom',
      '12,14-15',
      '--scale',
      '1,2',
      '--dry-run',
      '--json',
    );
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { total: number; zooms: Array<{ z: number; tiles: number; bytes: number }> };
    expect(j.zooms.map((z) => z.z)).toEqual([12, 14, 15]);
    for (const z of j.zooms) expect(z.tiles).toBe(expected(z.z).size * 2);
    expect(existsSync(join(data, 'tiles.mbtiles'))).toBe(false);
  });

  it('writes an MBTiles 1.3 file that a plain SQL reader maps back to the right XYZ tiles (TMS flip)', async () => {
    // Zooms 10-14: a single tile at 10-12, then several rows at 13 and 14. Below 10 the area is a single tile too,
    // each drawn over a whole region of Natural Earth land: the slowest tiles to draw, with nothing more to flip.
    const r = await cli('seed', '--data', data, '--bbox', bbox, '--zoom', '10-14', '--concurrency', '2');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/total/);
    const { meta, tiles } = readMbtiles(join(data, 'tiles.mbtiles'));
    expect(meta).toMatchObject({ format: 'png', minzoom: '10', maxzoom: '14' });
    expect(meta.name).toBeTruthy();
    expect(meta.attribution).toMatch(/OpenStreetMap/);
    const b = meta.bounds!.split(',').map(Number);
    expect(b[0]).toBeCloseTo(BBOX[0], 4);
    expect(b[3]).toBeCloseTo(BBOX[3], 4);
    const want = new Set(Array.from({ length: 5 }, (_, i) => [...expected(10 + i)]).flat());
    expect(new Set(tiles.map((t) => t.key))).toEqual(want);
    const img = await loadImage(tiles[0]!.data);
    expect(img.width).toBe(256);
  });

  it('kill -9 during a seed, then --resume: every tile present and valid', async () => {
    // One thread over ~60 tiles: slow enough that the first committed batch (after 1 s) is only part of the job.
    const child = spawn(
      process.execPath,
      [...CLI, 'seed', '--data', data, '--bbox', bbox, '--zoom', '16', '--scale', '2', '--concurrency', '1'],
      { stdio: 'ignore' },
    );
    const file = join(data, 'tiles@2x.mbtiles');
    const count = () => countTiles(file);
    const total = expected(16).size;
    for (let i = 0; i < 400 && count() < 1; i++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const partial = count();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(total);

    const resumed = await cli('seed', '--data', data, '--resume', '--json');
    expect(resumed.code, resumed.err).toBe(0);
    const summary = JSON.parse(resumed.out) as { zooms: Array<{ skipped: number; written: number; failed: number }> };
    expect(summary.zooms.reduce((s, z) => s + z.skipped, 0)).toBe(partial);
    expect(summary.zooms.reduce((s, z) => s + z.written + z.skipped, 0)).toBe(total);
    const { tiles } = readMbtiles(file);
    expect(new Set(tiles.map((t) => t.key))).toEqual(expected(16));
    const v = await cli('tiles', 'validate', '--data', data, '--json');
    expect(v.code, v.out + v.err).toBe(0);
    expect((JSON.parse(v.out) as Array<{ problems: string[] }>).every((f) => f.problems.length === 0)).toBe(true);
    expect((await cli('seed', '--data', data, '--resume')).err).toMatch(/nothing to resume/);
  }, 60_000);

  it('Ctrl-C (SIGINT) stops a seed cleanly with exit code 130 and a hint; --resume finishes it', async () => {
    const child = spawn(
      process.execPath,
      [
        ...CLI,
        'seed',
        '--data',
        data,
        '--bbox',
        SMALL.join(','),
        '--zoom',
        '15-16',
        '--scale',
        '3',
        '--concurrency',
        '1',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const file = join(data, 'tiles@3x.mbtiles');
    for (let i = 0; i < 400 && countTiles(file) < 1; i++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const code = await new Promise((r) => child.once('exit', r));
    expect(code).toBe(130);
    expect(err).toMatch(/interrupted.*--resume/);
    const resumed = await cli('seed', '--data', data, '--resume', '--json');
    expect(resumed.code, resumed.err).toBe(0);
    const { tiles } = readMbtiles(file);
    expect(new Set(tiles.map((t) => t.key))).toEqual(new Set([...expected(15, SMALL), ...expected(16, SMALL)]));
  }, 60_000);

  it('--refresh-before re-renders only tiles older than the given time', async () => {
    const past = await cli(
      'seed',
      '--data',
      data,
      '--bbox',
      bbox,
      '--zoom',
      '10-12',
      '--refresh-before',
      '2000-01-01T00:00:00Z',
      '--json',
    );
    expect(JSON.parse(past.out).zooms.every((z: { written: number }) => z.written === 0)).toBe(true);
    const future = await cli(
      'seed',
      '--data',
      data,
      '--bbox',
      bbox,
      '--zoom',
      '10-12',
      '--refresh-before',
      new Date(Date.now() + 60_000).toISOString(),
      '--json',
    );
    expect(
      JSON.parse(future.out).zooms.every((z: { written: number; skipped: number }) => z.written > 0 && z.skipped === 0),
    ).toBe(true);
  });

  it('tiles export writes a standalone subset; tiles info lists it; the server serves seeded tiles from cache', async () => {
    const out = join(data, 'subset.mbtiles');
    const e = await cli(
      'tiles',
      'export',
      '--data',
      data,
      '--bbox',
      '7.41,43.73,7.43,43.74',
      '--zoom',
      '13-14',
      '--output',
      out,
    );
    expect(e.code, e.err).toBe(0);
    const { meta, tiles } = readMbtiles(out);
    expect(meta.minzoom).toBe('13');
    expect(tiles.length).toBeGreaterThan(0);
    expect(tiles.every((t) => /^1[34]\//.test(t.key))).toBe(true);
    const info = await cli('tiles', 'info', out, '--json');
    expect(JSON.parse(info.out).files[0].zooms.map((z: { z: number }) => z.z)).toEqual([13, 14]);

    const s = await startServer({ data_dir: data });
    try {
      const t = await tileToken(s);
      const [x, y] = pointToTile(7.42, 43.735, 14);
      const r = await s.get(`/maps/v1/tiles/14/${x}/${y}.png?t=${t}`);
      expect(r.headers.get('x-tile-source')).toBe('cache');
    } finally {
      s.app.close();
    }
    // A newer import (render.db changed after the tiles were stored) makes stored tiles stale: rendered again.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(data, 'render.db'), later, later);
    const s2 = await startServer({ data_dir: data });
    try {
      const t = await tileToken(s2);
      const [x, y] = pointToTile(7.42, 43.735, 14);
      expect((await s2.get(`/maps/v1/tiles/14/${x}/${y}.png?t=${t}`)).headers.get('x-tile-source')).toBe('fresh');
      expect((await s2.get(`/maps/v1/tiles/14/${x}/${y}.png?t=${t}`)).headers.get('x-tile-source')).toBe('memory');
    } finally {
      s2.app.close();
    }
  });

  it('rejects bad arguments with one-line errors', async () => {
    expect((await cli('seed', '--data', data, '--zoom', '3')).err).toMatch(/--bbox/);
    expect((await cli('seed', '--data', data, '--bbox', '1,2,3', '--zoom', '3')).err).toMatch(
      /minLng,minLat,maxLng,maxLat/,
    );
    expect((await cli('seed', '--data', data, '--bbox', bbox, '--zoom', '5-30')).err).toMatch(/0-20/);
    const poly = join(data, 'p.geojson');
    writeFileSync(
      poly,
      JSON.stringify({
        type: 'Feature',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [7.41, 43.73],
              [7.43, 43.73],
              [7.42, 43.745],
              [7.41, 43.73],
            ],
          ],
        },
      }),
    );
    const d = await cli('seed', '--data', data, '--polygon', poly, '--zoom', '16', '--dry-run', '--json');
    expect(JSON.parse(d.out).total).toBeGreaterThan(0);
    expect(JSON.parse(d.out).total).toBeLessThanOrEqual(expected(16).size);
  });
});
