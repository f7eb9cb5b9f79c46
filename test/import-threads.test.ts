import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IMPORTERS } from '../src/import/importers.js';
import { estimatedPeak, importInThreads } from '../src/import/parallel.js';
import { GRAPH_FILE } from '../src/routing/graph.js';
import { cli } from './helpers/cli.js';
import { MONACO_PBF } from './helpers/fixtures.js';

describe('importers side by side, one thread each', () => {
  const root = mkdtempSync(join(tmpdir(), 'svcmaps-threads-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** Imports Monaco in two threads into a fresh directory, recording which importer reported progress when. */
  async function importMonaco(name: string, memoryBytes: number, pbfBytes: number) {
    const dir = join(root, name);
    await cli('keys', 'list', '--data', dir); // prepares the directory
    const events: Array<{ name: string; at: number }> = [];
    const summaries = await importInThreads(
      IMPORTERS,
      MONACO_PBF,
      dir,
      (importer) => events.push({ name: importer, at: performance.now() }),
      new AbortController().signal,
      { memoryBytes, threads: 2, pbfBytes },
    );
    return { summaries, events };
  }

  it('two threads run roads, render and places at the same time; summaries come back in importer order', async () => {
    const { summaries, events } = await importMonaco('direct', 256 * 2 ** 20, statSync(MONACO_PBF).size);
    expect(summaries.map((s) => s.importer)).toEqual(IMPORTERS.map((i) => i.name));
    expect(summaries.find((s) => s.importer === 'roads')!.counts.nodes).toBeGreaterThan(1000);
    // render's progress arrives while roads (started first, the longest) is still reporting
    const span = (n: string) => events.filter((e) => e.name === n).map((e) => e.at);
    const roads = span('roads'),
      render = span('render');
    expect(render.some((t) => t > Math.min(...roads) && t < Math.max(...roads))).toBe(true);
  }, 120_000);

  it('importers whose estimated peaks do not fit the memory budget together run one after another', async () => {
    const MB = 2 ** 20;
    // As if the file were 30 MB: roads alone (~255 MB) fits 256 MB; no two importers fit together.
    expect(estimatedPeak('roads', 30 * MB)).toBeLessThanOrEqual(256 * MB);
    expect(estimatedPeak('render', 30 * MB) + estimatedPeak('places', 30 * MB)).toBeGreaterThan(256 * MB);
    const { summaries, events } = await importMonaco('budget', 256 * MB, 30 * MB);
    expect(summaries.map((s) => s.importer)).toEqual(IMPORTERS.map((i) => i.name));
    // progress never interleaves: each importer reports only after the one before it finished, roads first
    const order = events.map((e) => e.name).filter((n, i, a) => n !== a[i - 1]);
    expect(order).toEqual(['roads', 'render', 'places']);
  }, 120_000);

  it('`svcmaps import` of a broken file fails in one line and leaves the imported data in service', async () => {
    const dir = join(root, 'cli');
    const first = await cli('import', MONACO_PBF, '--data', dir, '--json');
    expect(first.code, first.err).toBe(0);
    expect((JSON.parse(first.out) as Array<{ importer: string }>).map((s) => s.importer).sort()).toEqual([
      'places',
      'render',
      'roads',
    ]);
    const graph = join(dir, GRAPH_FILE);
    const before = { bytes: readFileSync(graph), mtime: statSync(graph).mtimeMs };
    const broken = join(root, 'broken.osm.pbf');
    writeFileSync(broken, Buffer.concat([readFileSync(MONACO_PBF).subarray(0, 4096), Buffer.alloc(4096, 7)]));
    const r = await cli('import', broken, '--data', dir);
    expect(r.code).toBe(1);
    const lines = r.err.trim().split('\n');
    expect(lines[lines.length - 1]).toMatch(/^svcmaps: \S/);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(statSync(graph).mtimeMs).toBe(before.mtime);
    expect(readFileSync(graph).equals(before.bytes)).toBe(true);
  }, 180_000);
});
