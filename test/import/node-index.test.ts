import { describe, expect, it } from 'vitest';
import { IdOrdinals } from '../../src/import/id-ordinals.js';
import { NodeIndex, NodeUnsortedError, parseSize } from '../../src/import/node-index.js';
import { WayStore } from '../../src/import/way-store.js';

/** A deterministic coordinate for node id `id` (1e-7 degree grid, like OSM). */
const latOf = (id: number) => (((id * 7919) % 1_700_000_000) - 850_000_000) / 1e7;
const lonOf = (id: number) => (((id * 104_729) % 3_500_000_000) - 1_750_000_000) / 1e7;

describe('node index', () => {
  it('holds more than 2^24 distinct ids (past the JS Map limit) and finds every one of them', () => {
    const n = 2 ** 24 + 50_000;
    const idx = new NodeIndex({ budgetBytes: 2 ** 30 });
    // ids with gaps, like a real extract: 3 of every 4 ids present
    const idAt = (i: number) => 1 + Math.floor(i / 3) * 4 + (i % 3);
    for (let i = 0; i < n; i++) {
      const id = idAt(i);
      idx.add(id, latOf(id), lonOf(id));
    }
    expect(idx.size).toBe(n);
    expect(idx.spilledChunks).toBe(0);
    const out = new Float64Array(2);
    let wrong = 0;
    for (let i = 0; i < n; i += 7) {
      const id = idAt(i);
      if (!idx.lookup(id, out) || out[0] !== latOf(id) || out[1] !== lonOf(id)) wrong++;
    }
    expect(wrong).toBe(0);
    expect(idx.lookup(4, out)).toBe(false); // a gap
    expect(idx.lookup(idAt(n - 1) + 1, out)).toBe(false); // past the end
    expect(idx.lookup(0, out)).toBe(false); // before the start
    idx.close();
  }, 60_000);

  it('ids above 2^32, and chunks whose ids span more than 2^32, stay exact', () => {
    const idx = new NodeIndex({ chunkSize: 1000 });
    const ids: number[] = [];
    for (let i = 0; i < 5000; i++) ids.push(2 ** 32 - 2500 + i); // across 2^32
    for (let i = 0; i < 300; i++) ids.push(2 ** 40 + i * 2 ** 33); // sparse: each gap > 2^32 within one chunk
    for (let i = 0; i < 3000; i++) ids.push(2 ** 52 + i * 3); // near the largest exact integer
    for (const id of ids) idx.add(id, 47.1234567, -122.7654321);
    const out = [0, 0];
    for (const id of ids) {
      expect(idx.lookup(id, out)).toBe(true);
      expect(out).toEqual([47.1234567, -122.7654321]);
    }
    expect(idx.get(2 ** 40 + 2 ** 33 + 1)).toBeUndefined();
    expect(idx.get(2 ** 52 + 1)).toBeUndefined();
    idx.close();
  });

  it('spilling under a tiny budget gives the same answers, through positioned reads', () => {
    const ids: number[] = [];
    for (let id = 10, i = 0; i < 200_000; i++) ids.push((id += 1 + (i % 5)));
    const build = (budgetBytes: number) => {
      const idx = new NodeIndex({ chunkSize: 1024, budgetBytes });
      for (const id of ids) idx.add(id, latOf(id), lonOf(id));
      return idx;
    };
    const big = build(2 ** 30);
    const tiny = build(64 * 1024);
    expect(big.spilledChunks).toBe(0);
    expect(tiny.spilledChunks).toBeGreaterThan(150); // nearly all of the 196 chunks
    expect(tiny.memoryBytes).toBeLessThan(200 * 1024);
    const a = new Float64Array(2),
      b = new Float64Array(2);
    // random order defeats the chunk cache: every answer must still match
    let seed = 42,
      differ = 0,
      found = 0;
    for (let k = 0; k < 50_000; k++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const id = ids[seed % ids.length]! + (k % 3 === 0 ? 1 : 0); // some ids in the gaps
      const fa = big.lookup(id, a),
        fb = tiny.lookup(id, b);
      if (fa !== fb || (fa && (a[0] !== b[0] || a[1] !== b[1]))) differ++;
      if (fa) found++;
    }
    expect(differ).toBe(0);
    expect(found).toBeGreaterThan(30_000);
    expect(tiny.spillReads).toBeGreaterThan(100);
    big.close();
    tiny.close();
  });

  it('another thread attaches to a shared index: the same answers from its chunks and spill file, read-only', () => {
    const idx = new NodeIndex({ chunkSize: 1024, budgetBytes: 64 * 1024 });
    for (let id = 1; id <= 100_000; id++) idx.add(id * 3, latOf(id), lonOf(id));
    const share = idx.share();
    expect(share.chunks.some((c) => c instanceof SharedArrayBuffer)).toBe(true); // resident, in shared memory
    expect(share.chunks.some((c) => c === null)).toBe(true); // spilled: read through the descriptor
    const view = NodeIndex.attach(structuredClone(share)); // as postMessage delivers it
    expect(view.size).toBe(100_000);
    const a = [0, 0],
      b = [0, 0];
    let differ = 0;
    for (let id = 1; id <= 100_000; id += 7) {
      if (!view.lookup(id * 3, a) || !idx.lookup(id * 3, b) || a[0] !== b[0] || a[1] !== b[1]) differ++;
      if (view.lookup(id * 3 + 1, a)) differ++;
    }
    expect(differ).toBe(0);
    expect(() => view.add(400_000, 0, 0)).toThrow(/read-only/);
    view.close(); // its own cache only: the index it attached to goes on
    expect(idx.get(300_000)).toEqual([latOf(100_000), lonOf(100_000)]);
    idx.close();
  });

  it('sorts disorder within a chunk; reports an extract not sorted by id in one line', () => {
    const idx = new NodeIndex({ chunkSize: 4 });
    for (const id of [3, 1, 2, 4]) idx.add(id, id, id);
    for (const id of [9, 7]) idx.add(id, id, id);
    expect([1, 2, 3, 4, 7, 9].map((id) => idx.get(id)?.[0])).toEqual([1, 2, 3, 4, 7, 9]);
    idx.add(5, 0, 0); // below the sealed chunks
    expect(() => idx.lookup(5, [0, 0])).toThrow(NodeUnsortedError);
    expect(() => idx.lookup(5, [0, 0])).not.toThrow(/\n/);
  });

  it('parses memory sizes', () => {
    expect(parseSize('4g')).toBe(4 * 2 ** 30);
    expect(parseSize('512M')).toBe(512 * 2 ** 20);
    expect(parseSize('1.5GB')).toBe(1.5 * 2 ** 30);
    expect(parseSize('1000')).toBe(1000);
    expect(() => parseSize('lots')).toThrow(/not a size/);
  });
});

describe('way store', () => {
  it('reads back every way, by id, identically from memory and from its spill file', () => {
    const make = (budgetBytes: number) => {
      const s = new WayStore({ budgetBytes });
      // 3,000 ways of 1..400 points: 1.2M points, more than one 4 MiB block
      for (let w = 0; w < 3000; w++) {
        const n = 1 + ((w * 37) % 400);
        const ll: number[] = [];
        for (let i = 0; i < n; i++) ll.push(latOf(w * 1000 + i), lonOf(w * 1000 + i));
        s.add(2 ** 33 + w * 2, w, w + 1, ll);
      }
      return s;
    };
    const mem = make(2 ** 30),
      disk = make(0);
    expect(mem.spilledBlocks).toBe(0);
    expect(disk.spilledBlocks).toBeGreaterThan(0);
    let differ = 0;
    for (let w = 0; w < 3000; w += 3) {
      const a = mem.read(mem.find(2 ** 33 + w * 2)),
        b = disk.read(disk.find(2 ** 33 + w * 2));
      if (a.latLon.length !== 2 * (1 + ((w * 37) % 400)) || a.first !== w || a.last !== w + 1) differ++;
      if (a.latLon.some((v, i) => v !== b.latLon[i] || v !== (i % 2 ? lonOf : latOf)(w * 1000 + (i >> 1)))) differ++;
    }
    expect(differ).toBe(0);
    expect(mem.find(2 ** 33 + 1)).toBe(-1);
    mem.close();
    disk.close();
  });
});

describe('id ordinals (way ids of the road importer)', () => {
  it('maps ids to the order they came in, sorted or not, above 2^32 too', () => {
    const sorted = IdOrdinals.from([5, 9, 2 ** 33, 2 ** 40 + 1]);
    expect([5, 9, 2 ** 33, 2 ** 40 + 1, 6].map((id) => sorted.get(id))).toEqual([0, 1, 2, 3, undefined]);
    const shuffled = IdOrdinals.from([2 ** 40, 7, 3, 2 ** 33]);
    expect([2 ** 40, 7, 3, 2 ** 33, 4].map((id) => shuffled.get(id))).toEqual([0, 1, 2, 3, undefined]);
    shuffled.push(1);
    expect(shuffled.get(1)).toBe(4);
  });
});
