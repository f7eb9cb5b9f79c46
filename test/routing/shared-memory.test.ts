import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roadsImporter } from '../../src/import/roads-importer.js';
import { AnswerSlab, takeAnswer } from '../../src/routing/threads/answer-slab.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { readGraphFile, readGraphFileShared } from '../../src/routing/build/graph-file.js';
import { GRAPH_FILE, loadGraph } from '../../src/routing/graph.js';
import type { RoadGraph } from '../../src/routing/road-graph.js';
import type { RoutePath } from '../../src/routing/query/path.js';
import { PathSlab, sharedPath, type SharedPath } from '../../src/routing/threads/path-slab.js';
import { HelpDesk, helpWords, WORDS } from '../../src/routing/threads/route-help.js';
import { pathRecord } from '../../src/routing/answer/route-record.js';
import { maneuvers } from '../../src/routing/answer/maneuvers.js';
import { silentLogger } from '../../src/core/log.js';
import { LIECHTENSTEIN_PBF } from '../helpers/fixtures.js';

/**
 * What routing threads share instead of copying (path-slab.ts, answer-slab.ts) and the graph read in parallel
 * chunks (graph-file.ts), on the Liechtenstein import: what is read is what was written, and nothing handed out is
 * written over before its reader is done with it.
 */
describe('routing memory shared between threads', () => {
  let dir: string;
  let g: RoadGraph;
  let paths: RoutePath[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcmaps-route-shared-'));
    await roadsImporter.run(LIECHTENSTEIN_PBF, dir, () => {}, new AbortController().signal);
    g = loadGraph(join(dir, GRAPH_FILE), { shared: true });
    const engine = new BuiltinEngine(g, { snapMaxMeters: 1500 });
    paths = engine.paths({ lat: 47.157, lng: 9.5081 }, { lat: 47.2175, lng: 9.5237 }, 2)!;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const ARRAYS = ['chain', 'say', 'dev', 'way', 'node', 'dist', 'time'] as const;
  const expectSamePath = (got: RoutePath, want: RoutePath) => {
    expect(got.n).toBe(want.n);
    for (const k of ARRAYS) expect([...got[k]]).toEqual([...want[k].subarray(0, want.n)]);
    expect([...got.pts]).toEqual([...want.pts.subarray(0, 2 * want.n + 2)]);
    expect([got.behind, got.toward, got.distM, got.ms]).toEqual([want.behind, want.toward, want.distM, want.ms]);
  };

  it('a path handed over reads back the same; pieces of one query never overlap, and a full slab grows', () => {
    expect(paths.length).toBe(3);
    expect(paths[0]!.n).toBeGreaterThan(20);
    const slab = new PathSlab(1024); // smaller than two of these paths: the second goes to a new buffer
    const put = paths.map((p) => slab.put(p));
    put.forEach((s, i) => expectSamePath(sharedPath(s), paths[i]!));
    const bufs = new Set(put.map((s) => s.buf));
    expect(bufs.size).toBeGreaterThan(1);
    // within one buffer, pieces follow each other (8-byte aligned)
    for (const [i, s] of put.entries())
      for (const t of put.slice(i + 1)) if (t.buf === s.buf) expect(t.at).toBeGreaterThanOrEqual(s.at + 50 * s.n + 16);
    // a new query writes over the last buffer from its start; after abandon(), never over it
    slab.reset();
    const again = slab.put(paths[1]!);
    expect(again.buf).toBe(put[2]!.buf);
    expect(again.at).toBe(0);
    slab.abandon();
    const fresh = slab.put(paths[0]!);
    expect(fresh.buf).not.toBe(again.buf);
    expectSamePath(sharedPath(again), paths[1]!);
  });

  it('a desk whose query ended without taking its job writes the next job to a new buffer', async () => {
    const init = { words: helpWords(2), channel: `test-${Math.random()}`, minPieces: 0 };
    const asker = new HelpDesk(init, 0, g);
    // stands in for the helper's desk: only sees the jobs (the word says slot 1 is idle, so it is claimed)
    Atomics.store(init.words, WORDS, 0);
    const jobs: SharedPath[] = [];
    const spy = new BroadcastChannel(`${init.channel}:1:job`);
    spy.onmessage = (e) => jobs.push((e as { data: { path: SharedPath } }).data.path);
    try {
      asker.running();
      expect(asker.handOver(paths[0]!, 'Fastest', 'simplified', 'en')).toBeDefined();
      asker.idle(); // cancelled: never taken
      Atomics.store(init.words, WORDS, 0);
      asker.running();
      expect(asker.handOver(paths[1]!, 'Alternative 1', 'simplified', 'en')).toBeDefined();
      asker.idle();
      for (let i = 0; i < 3000 && jobs.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(jobs.length).toBe(2);
      // (each message brings its own SharedArrayBuffer object: the memory tells whether the first was written over)
      expectSamePath(sharedPath(jobs[0]!), paths[0]!); // what the helper may still be reading is intact
      expectSamePath(sharedPath(jobs[1]!), paths[1]!);
    } finally {
      spy.close();
      asker.close();
    }
  });

  it("an answer is taken once; one never taken is not written over, and a leg longer than the slab's fits", () => {
    const slab = new AnswerSlab(64);
    const leg = (fill: number, len = 40) =>
      slab.hold((room) => {
        room(len).fill(fill);
      });
    const a = leg(1);
    expect([...takeAnswer(a)]).toEqual(Array(40).fill(1));
    const b = leg(2);
    expect(b.buf).toBe(a.buf); // taken: the same room again
    const c = leg(3); // b is not taken (its query was abandoned): c goes elsewhere
    expect(c.buf).not.toBe(b.buf);
    expect([...takeAnswer(b)]).toEqual(Array(40).fill(2));
    expect([...takeAnswer(c)]).toEqual(Array(40).fill(3));
    const big = leg(4, 1000);
    expect(big.buf.byteLength).toBeGreaterThan(1000);
    expect([...takeAnswer(big)]).toEqual(Array(1000).fill(4));
    expect(() => slab.hold(() => {})).toThrow(/no leg/);
  });

  it("a helper whose writing fails logs why and hands the job back; the asker's answer is what it writes alone", async () => {
    const init = { words: helpWords(2), channel: `test-${Math.random()}`, minPieces: 0 };
    const lines: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
    const log = {
      ...silentLogger,
      error: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }),
    };
    // the helper's view of the graph fails on every read but its identity (the same import as the asker's)
    const broken = new Proxy(g, {
      get(target, k) {
        if (k === 'meta') return target.meta;
        throw new Error(`graph section ${String(k)} unreadable`);
      },
    });
    const asker = new HelpDesk(init, 0, g);
    const helper = new HelpDesk(init, 1, broken, log);
    try {
      const alone = pathRecord(g, paths[0]!, 'Fastest', 'simplified', maneuvers(g, paths[0]!, 'en'));
      const handed = asker.handOver(paths[0]!, 'Fastest', 'simplified', 'en')!;
      expect(handed).toBeDefined();
      while (!lines.length) await new Promise((r) => setTimeout(r, 5)); // the helper takes the job up
      expect(Buffer.from(handed.take().json).equals(Buffer.from(alone.json))).toBe(true);
      expect(Atomics.load(init.words, WORDS + 2)).toBe(0); // nothing written for the asker
      expect(lines).toEqual([
        {
          msg: 'routing thread failed to write a path for another',
          fields: { slot: 1, for: 0, error: expect.stringMatching(/^Error: graph section \w+ unreadable\n\s+at /) },
        },
      ]);
    } finally {
      asker.close();
      helper.close();
    }
  });

  it('the graph read in parallel chunks into shared memory is the file read at once', async () => {
    const file = join(dir, GRAPH_FILE);
    const once = readGraphFile(file);
    const chunked = await readGraphFileShared(file, { chunk: 4096 + 7 }); // many chunks, none aligned to a section
    expect(chunked.meta).toEqual(once.meta);
    expect(Object.keys(chunked.sections)).toEqual(Object.keys(once.sections));
    for (const [name, arr] of Object.entries(once.sections)) {
      const got = chunked.sections[name]!;
      expect(got.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(
        Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(
          Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength),
        ),
      ).toBe(true);
    }
  });
});
