import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IMPORTERS } from '../src/import/importers.js';
import { importInThreads } from '../src/import/parallel.js';
import { GRAPH_FILE } from '../src/routing/graph.js';
import { cli } from './helpers/cli.js';
import { MONACO_PBF } from './helpers/fixtures.js';

describe('importers side by side, one thread each', () => {
  const root = mkdtempSync(join(tmpdir(), 'svcmaps-threads-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('two threads run roads, render and places at the same time; summaries come back in importer order', async () => {
    const dir = join(root, 'direct');
    await cli('keys', 'list', '--data', dir); // prepares the directory
    const events: Array<{ name: string; at: number }> = [];
    const summaries = await importInThreads(
      IMPORTERS,
      MONACO_PBF,
      dir,
      (name) => events.push({ name, at: performance.now() }),
      new AbortController().signal,
      { memoryBytes: 256 * 2 ** 20, threads: 2 },
    );
    expect(summaries.map((s) => s.importer)).toEqual(IMPORTERS.map((i) => i.name));
    expect(summaries.find((s) => s.importer === 'roads')!.counts.nodes).toBeGreaterThan(1000);
    // render's progress arrives while roads (started first, the longest) is still reporting
    const span = (n: string) => events.filter((e) => e.name === n).map((e) => e.at);
    const roads = span('roads'),
      render = span('render');
    expect(render.some((t) => t > Math.min(...roads) && t < Math.max(...roads))).toBe(true);
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
