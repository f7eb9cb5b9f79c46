import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';

/**
 * Node coordinates of an OSM extract, compact and bounded in memory: the index every importer that needs node
 * positions uses (no JS Map or Set keyed by node id, which cannot pass 2^24 entries and costs ~80 bytes a node).
 *
 * PBF files list nodes in ascending id order, so nodes are appended into id-sorted chunks of `chunkSize` entries:
 * per node a Uint32 id offset from the chunk's first id (a Float64, so ids above 2^32 are exact up to 2^53) and two
 * Int32 coordinates in OSM's own 1e-7 degree fixed point: 12 bytes a node. A lookup is a binary search of the chunk
 * directory, then of the chunk. Once the resident chunks reach the memory budget, further chunks are written to a
 * temporary file (unlinked at once, so it never outlives the process) and read back with positioned reads through a
 * small LRU cache of chunks. Input out of order within a chunk is sorted when the chunk is sealed; a node whose id
 * is not above every earlier chunk's ids means the file is not sorted by id, which is reported as such.
 */
export interface NodeIndexOptions {
  /** Bytes the resident chunks and the read cache may use together (default 1 GiB). */
  budgetBytes?: number;
  /** Where a spill file goes (default: the OS temp directory). Use the data directory: /tmp is often RAM. */
  spillDir?: string;
  /** Nodes per chunk (default 65,536); tests use small chunks. */
  chunkSize?: number;
}

const BYTES_PER_NODE = 12;
const U32_SPAN = 0xffffffff;

interface Chunk {
  ids: Uint32Array; // id - base
  lat: Int32Array;
  lon: Int32Array;
}

/**
 * A sealed index as other threads of the process attach to it (NodeIndex.share, NodeIndex.attach): its chunk
 * directory, its resident chunks in shared memory, and the spill file's descriptor (descriptors belong to the
 * process, so a positioned read works from any thread). The index that shared it must stay open until every thread
 * attached to it is done.
 */
export interface NodeIndexShare {
  chunkSize: number;
  cacheChunks: number;
  nChunks: number;
  size: number;
  first: Float64Array;
  last: Float64Array;
  offset: Float64Array;
  count: Uint32Array;
  chunks: Array<SharedArrayBuffer | null>;
  fd: number;
}

export class NodeUnsortedError extends Error {
  constructor(id: number, after: number) {
    super(`node ${id} comes after node ${after}: the extract is not sorted by id (sort it with \`osmium sort\`)`);
  }
}

export class NodeIndex {
  private readonly chunkSize: number;
  private readonly budget: number;
  private readonly cacheChunks: number;
  private readonly spillDir: string;
  // the chunk being filled
  private curIds: Float64Array;
  private curLat: Int32Array;
  private curLon: Int32Array;
  private curN = 0;
  private curSorted = true;
  // directory of sealed chunks
  private first = new Float64Array(64);
  private last = new Float64Array(64);
  private offset = new Float64Array(64); // byte offset in the spill file, -1 when resident
  private count = new Uint32Array(64);
  private chunks: Array<Chunk | undefined> = [];
  /** Resident chunks' memory, shared with attached threads. */
  private chunkMem: Array<SharedArrayBuffer | undefined> = [];
  /** Attached (NodeIndex.attach): read-only, and the spill file is not this index's to close. */
  private attached = false;
  private nChunks = 0;
  private n = 0;
  private residentBytes = 0;
  private fd = -1;
  private fileBytes = 0;
  private readonly cache = new Map<number, Chunk>(); // chunk number -> chunk, in LRU order
  private lastHit = -1;
  private closed = false;
  /** Positioned reads of spilled chunks (cache misses), for tests and progress. */
  spillReads = 0;

  constructor(opts: NodeIndexOptions = {}) {
    this.chunkSize = Math.max(2, opts.chunkSize ?? 65_536);
    const budget = opts.budgetBytes ?? 1 << 30;
    const chunkBytes = this.chunkSize * BYTES_PER_NODE;
    // An eighth of the budget (at least two chunks) caches spilled chunks; the rest holds resident ones.
    this.cacheChunks = Math.max(2, Math.floor(budget / 8 / chunkBytes));
    this.budget = Math.max(0, budget - this.cacheChunks * chunkBytes);
    this.spillDir = opts.spillDir ?? tmpdir();
    this.curIds = new Float64Array(this.chunkSize);
    this.curLat = new Int32Array(this.chunkSize);
    this.curLon = new Int32Array(this.chunkSize);
  }

  /** Nodes added. */
  get size(): number {
    return this.n;
  }

  /** Chunks written to the spill file. */
  get spilledChunks(): number {
    let s = 0;
    for (let c = 0; c < this.nChunks; c++) if (this.offset[c]! >= 0) s++;
    return s;
  }

  /** Bytes held in memory by resident chunks, the chunk being filled and the read cache. */
  get memoryBytes(): number {
    // the chunk being filled: a Float64 id and two Int32 coordinates a slot
    return this.residentBytes + this.cache.size * this.chunkSize * BYTES_PER_NODE + this.curIds.byteLength * 2;
  }

  add(id: number, lat: number, lon: number): void {
    if (this.attached) throw new Error('an attached node index is read-only');
    if (this.curN === this.chunkSize) this.seal();
    const i = this.curN++;
    if (i > 0 && id < this.curIds[i - 1]!) this.curSorted = false;
    this.curIds[i] = id;
    this.curLat[i] = Math.round(lat * 1e7);
    this.curLon[i] = Math.round(lon * 1e7);
    this.n++;
  }

  /**
   * Writes the node's [lat, lon] (degrees) into `out` and returns true, or returns false when the extract does not
   * hold the node (a way clipped at the extract's border). No allocation: meant for tens of millions of calls.
   */
  lookup(id: number, out: Float64Array | number[]): boolean {
    if (this.curN) this.seal();
    let c = this.lastHit;
    if (c < 0 || id < this.first[c]! || id > this.last[c]!) {
      c = this.findChunk(id);
      if (c < 0) return false;
      this.lastHit = c;
    }
    const ch = this.chunkAt(c);
    const want = id - this.first[c]!;
    const ids = ch.ids;
    let lo = 0,
      hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = ids[mid]!;
      if (v < want) lo = mid + 1;
      else if (v > want) hi = mid - 1;
      else {
        out[0] = ch.lat[mid]! / 1e7;
        out[1] = ch.lon[mid]! / 1e7;
        return true;
      }
    }
    return false;
  }

  /** [lat, lon] or undefined; allocates, so prefer `lookup` in hot loops. */
  get(id: number): [number, number] | undefined {
    const out: [number, number] = [0, 0];
    return this.lookup(id, out) ? out : undefined;
  }

  /** Frees the memory and the spill file. The index is unusable afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd >= 0 && !this.attached) closeSync(this.fd);
    this.fd = -1;
    this.chunks = [];
    this.chunkMem = [];
    this.cache.clear();
    this.curIds = new Float64Array(0);
    this.curLat = new Int32Array(0);
    this.curLon = new Int32Array(0);
  }

  /** Seals the index and describes it for NodeIndex.attach in other threads (no copy of the chunks). */
  share(): NodeIndexShare {
    this.seal();
    const m = this.nChunks;
    return {
      chunkSize: this.chunkSize,
      cacheChunks: this.cacheChunks,
      nChunks: m,
      size: this.n,
      first: this.first.slice(0, m),
      last: this.last.slice(0, m),
      offset: this.offset.slice(0, m),
      count: this.count.slice(0, m),
      chunks: Array.from({ length: m }, (_, c) => this.chunkMem[c] ?? null),
      fd: this.fd,
    };
  }

  /** A read-only index over one another thread shared; close() frees only this thread's read cache. */
  static attach(s: NodeIndexShare): NodeIndex {
    const x = new NodeIndex({ chunkSize: s.chunkSize, budgetBytes: 0 });
    Object.assign(x, {
      attached: true,
      cacheChunks: s.cacheChunks,
      nChunks: s.nChunks,
      n: s.size,
      first: s.first,
      last: s.last,
      offset: s.offset,
      count: s.count,
      fd: s.fd,
      chunks: s.chunks.map((b, c) => (b ? chunkOver(b, s.count[c]!) : undefined)),
      curIds: new Float64Array(0),
      curLat: new Int32Array(0),
      curLon: new Int32Array(0),
    });
    return x;
  }

  private findChunk(id: number): number {
    let lo = 0,
      hi = this.nChunks - 1,
      at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.first[mid]! <= id) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && id <= this.last[at]! ? at : -1;
  }

  private chunkAt(c: number): Chunk {
    const resident = this.chunks[c];
    if (resident) return resident;
    const hit = this.cache.get(c);
    if (hit) {
      this.cache.delete(c);
      this.cache.set(c, hit);
      return hit;
    }
    const k = this.count[c]!;
    const buf = new ArrayBuffer(k * BYTES_PER_NODE);
    const bytes = new Uint8Array(buf);
    let got = 0;
    while (got < bytes.length) {
      const r = readSync(this.fd, bytes, got, bytes.length - got, this.offset[c]! + got);
      if (r <= 0) throw new Error('node index spill file is truncated');
      got += r;
    }
    this.spillReads++;
    const ch = chunkOver(buf, k);
    if (this.cache.size >= this.cacheChunks) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(c, ch);
    return ch;
  }

  /** Closes the chunk being filled: sorts it if needed, splits it where ids span more than 2^32, stores it. */
  private seal(): void {
    const n = this.curN;
    if (!n) return;
    let ids = this.curIds.subarray(0, n),
      lat = this.curLat.subarray(0, n),
      lon = this.curLon.subarray(0, n);
    if (!this.curSorted) {
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      order.sort((a, b) => ids[a]! - ids[b]!);
      const sIds = new Float64Array(n),
        sLat = new Int32Array(n),
        sLon = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        sIds[i] = ids[order[i]!]!;
        sLat[i] = lat[order[i]!]!;
        sLon[i] = lon[order[i]!]!;
      }
      [ids, lat, lon] = [sIds, sLat, sLon];
    }
    if (this.nChunks && ids[0]! <= this.last[this.nChunks - 1]!) {
      const after = this.last[this.nChunks - 1]!;
      this.curN = 0;
      throw new NodeUnsortedError(ids[0]!, after);
    }
    let start = 0;
    for (let i = 1; i <= n; i++) {
      if (i === n || ids[i]! - ids[start]! > U32_SPAN) {
        this.store(ids.subarray(start, i), lat.subarray(start, i), lon.subarray(start, i));
        start = i;
      }
    }
    this.curN = 0;
    this.curSorted = true;
  }

  private store(ids: Float64Array, lat: Int32Array, lon: Int32Array): void {
    const k = ids.length;
    const c = this.nChunks++;
    if (c === this.first.length) {
      const grow = <T extends Float64Array | Uint32Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.first = grow(this.first, (m) => new Float64Array(m));
      this.last = grow(this.last, (m) => new Float64Array(m));
      this.offset = grow(this.offset, (m) => new Float64Array(m));
      this.count = grow(this.count, (m) => new Uint32Array(m));
    }
    const base = ids[0]!;
    this.first[c] = base;
    this.last[c] = ids[k - 1]!;
    this.count[c] = k;
    // shared memory, so threads that attach to the index read the resident chunks where they are
    const buf = new SharedArrayBuffer(k * BYTES_PER_NODE);
    const ch = chunkOver(buf, k);
    for (let i = 0; i < k; i++) ch.ids[i] = ids[i]! - base;
    ch.lat.set(lat);
    ch.lon.set(lon);
    if (this.residentBytes + buf.byteLength <= this.budget) {
      this.chunks[c] = ch;
      this.chunkMem[c] = buf;
      this.offset[c] = -1;
      this.residentBytes += buf.byteLength;
      return;
    }
    this.chunks[c] = undefined;
    if (this.fd < 0) this.openSpill();
    const bytes = new Uint8Array(buf);
    let put = 0;
    while (put < bytes.length) put += writeSync(this.fd, bytes, put, bytes.length - put, this.fileBytes + put);
    this.offset[c] = this.fileBytes;
    this.fileBytes += bytes.length;
  }

  private openSpill(): void {
    const dir = mkdtempSync(join(this.spillDir, '.svcmaps-nodes-'));
    const file = join(dir, 'nodes.bin');
    this.fd = openSync(file, 'w+');
    // Unlinked while open: the space is freed when the descriptor closes, even if the process is killed.
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      // platforms that cannot remove an open file keep it until close
      if (!isErrno(e, 'EBUSY', 'EPERM', 'ENOTEMPTY')) throw e;
    }
  }
}

/** A chunk's three columns over its k * 12 bytes. */
const chunkOver = (buf: ArrayBufferLike, k: number): Chunk => ({
  ids: new Uint32Array(buf, 0, k),
  lat: new Int32Array(buf, 4 * k, k),
  lon: new Int32Array(buf, 8 * k, k),
});

/** "4g", "512m", "800k", "1.5G", or plain bytes -> bytes. */
export function parseSize(s: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(s);
  if (!m) throw new Error(`not a size: ${s} (expected e.g. 4g, 512m)`);
  const mult = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2]!.toLowerCase() as '' | 'k'];
  return Math.floor(Number(m[1]) * mult);
}

/** The import memory budget when `--memory` is not given: fits a machine with 8 GB of RAM. */
export const DEFAULT_IMPORT_MEMORY = 4 * 2 ** 30;
