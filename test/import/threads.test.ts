import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IMPORTERS } from '../../src/import/importers.js';
import { estimatedPeak, importInThreads } from '../../src/import/parallel.js';
import { GRAPH_FILE } from '../../src/routing/graph.js';
import { cli } from '../helpers/cli.js';
import { MONACO_PBF } from '../helpers/fixtures.js';
import { withoutGazetteer } from '../helpers/gazetteer.js';

describe('importers side by side, one thread each, on one read of the file', () => {
  const root = mkdtempSync(join(tmpdir(), 'svcmaps-threads-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /**
   * Imports Monaco in two threads into a fresh directory, recording which importer reported which stage when. The
   * directory starts without the embedded gazetteer: what is checked here is how the importers share reads and
   * threads, and places counts only what it imports.
   */
  async function importMonaco(name: string, memoryBytes: number, pbfBytes: number, file = MONACO_PBF) {
    const dir = join(root, name);
    await cli('keys', 'list', '--data', dir); // prepares the directory
    withoutGazetteer(dir);
    const events: Array<{ name: string; stage: string; at: number }> = [];
    const summaries = await importInThreads(
      IMPORTERS,
      file,
      dir,
      (importer, stage) => events.push({ name: importer, stage, at: performance.now() }),
      new AbortController().signal,
      { memoryBytes, threads: 2, pbfBytes },
    );
    return { summaries, events };
  }

  let direct: Record<string, Record<string, number>> | undefined;

  it('two threads run roads, render and places at the same time; summaries come back in importer order', async () => {
    const { summaries, events } = await importMonaco('direct', 256 * 2 ** 20, statSync(MONACO_PBF).size);
    direct = Object.fromEntries(summaries.map((s) => [s.importer, s.counts]));
    expect(summaries.map((s) => s.importer)).toEqual(IMPORTERS.map((i) => i.name));
    expect(summaries.find((s) => s.importer === 'roads')!.counts.nodes).toBeGreaterThan(1000);
    // render's progress arrives while roads (started first, the longest) is still reporting
    const span = (n: string) => events.filter((e) => e.name === n).map((e) => e.at);
    const roads = span('roads'),
      render = span('render');
    expect(render.some((t) => t > Math.min(...roads) && t < Math.max(...roads))).toBe(true);
  }, 120_000);

  it('reads the file once for all three, under a tight budget: it imports from a pipe that reads once', async () => {
    const fifo = join(root, 'once.osm.pbf');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // the only writer: a second open of the pipe for reading would wait for another one forever
    const writer = spawn('sh', ['-c', 'cat "$0" > "$1"', MONACO_PBF, fifo], { stdio: 'ignore' });
    // 1 MiB, for a file said to be 64 kB (so all three fit it together): the shared node index spills (the threads
    // read its spill file through the parent's descriptor) and the read waits for the slowest thread every few blocks
    const { summaries } = await importMonaco('fifo', 2 ** 20, 64 * 1024, fifo);
    if (writer.exitCode === null) await new Promise((r) => writer.once('exit', r));
    expect(writer.exitCode).toBe(0);
    const counts = Object.fromEntries(summaries.map((s) => [s.importer, s.counts]));
    expect(counts).toEqual(direct); // what the import from the file itself gave (the first test)
    expect(counts.roads!.nodes).toBeGreaterThan(1000);
    expect(counts.places!.street).toBeGreaterThan(100);
  }, 120_000);

  it('importers whose estimated peaks do not fit the budget together read the file again, afterwards', async () => {
    const MB = 2 ** 20;
    // As if the file were 40 MB: roads alone (~340 MB) is over 256 MB (the first always goes); render and places fit
    // together
    expect(estimatedPeak('roads', 40 * MB)).toBeGreaterThan(256 * MB);
    expect(estimatedPeak('render', 40 * MB) + estimatedPeak('places', 40 * MB)).toBeLessThanOrEqual(256 * MB);
    const { summaries, events } = await importMonaco('budget', 256 * MB, 40 * MB);
    expect(summaries.map((s) => s.importer)).toEqual(IMPORTERS.map((i) => i.name));
    const at = (n: string) => events.filter((e) => e.name === n).map((e) => e.at);
    // roads read and built alone, then render and places read side by side (their progress interleaves)
    expect(Math.max(...at('roads'))).toBeLessThan(Math.min(...at('render'), ...at('places')));
    const reads = events.filter((e) => e.stage === 'read' && e.name !== 'roads').map((e) => e.name);
    expect(reads.filter((n, i) => n !== reads[i - 1]).length).toBeGreaterThan(2);
    // and nothing shares a read when no two fit: as if the file were 60 MB, each reads it in turn, longest first
    const alone = await importMonaco('alone', 256 * MB, 60 * MB);
    expect(estimatedPeak('render', 60 * MB) + estimatedPeak('places', 60 * MB)).toBeGreaterThan(256 * MB);
    expect(alone.events.map((e) => e.name).filter((n, i, a) => n !== a[i - 1])).toEqual(['roads', 'render', 'places']);
  }, 180_000);

  it('`svcmaps import` of a broken file fails in one line and leaves the imported data in service', async () => {
    const dir = join(root, 'cli');
    withoutGazetteer(dir); // (as in importMonaco)
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
