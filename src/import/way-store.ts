import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';

/**
 * Way geometries kept for later assembly (multipolygon members, named streets joined into label lines), compact and
 * bounded in memory: a directory of typed arrays (way id, end node ids, where its points start, how many) and the
 * points as Int32 pairs at 1e-7 degrees (8 bytes a point) in blocks; blocks past the memory budget go to a temp
 * file (unlinked at once) and are read back with positioned reads. Ways arrive in id order in a PBF, so a lookup
 * by id is a binary search (out-of-order ids are sorted once, on the first lookup).
 */
const BLOCK = 1 << 20; // Int32 values a block (4 MiB)

class GrowF64 {
  a = new Float64Array(1024);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
}

export interface StoredWay {
  id: number;
  /** OSM ids of the first and last node kept. */
  first: number;
  last: number;
  /** lat, lon, lat, lon... in degrees. */
  latLon: Float64Array;
}

export class WayStore {
  private readonly ids = new GrowF64();
  private readonly firstNode = new GrowF64();
  private readonly lastNode = new GrowF64();
  private readonly start = new GrowF64(); // index of the way's first Int32 value
  private readonly budgetBlocks: number;
  private readonly spillDir: string;
  private blocks: Array<Int32Array | undefined> = [];
  private cur = new Int32Array(BLOCK);
  private curAt = 0;
  private values = 0;
  private fd = -1;
  private sorted = true;
  private order: Uint32Array | undefined;
  private closed = false;

  constructor(opts: { budgetBytes?: number; spillDir?: string } = {}) {
    this.budgetBlocks = Math.max(0, Math.floor((opts.budgetBytes ?? 1 << 30) / (BLOCK * 4)));
    this.spillDir = opts.spillDir ?? tmpdir();
  }

  get size(): number {
    return this.ids.n;
  }

  /** Blocks written to the spill file. */
  get spilledBlocks(): number {
    return this.blocks.filter((b) => !b).length;
  }

  /** Stores a way; `latLon` holds its points as lat, lon pairs in degrees. Returns its ordinal for `read`. */
  add(id: number, first: number, last: number, latLon: ArrayLike<number>): number {
    const ord = this.ids.n;
    if (ord && id < this.ids.a[ord - 1]!) this.sorted = false;
    this.order = undefined;
    this.ids.push(id);
    this.firstNode.push(first);
    this.lastNode.push(last);
    this.start.push(this.values);
    for (let i = 0; i < latLon.length; i++) {
      if (this.curAt === BLOCK) this.sealBlock();
      this.cur[this.curAt++] = Math.round(latLon[i]! * 1e7);
    }
    this.values += latLon.length;
    return ord;
  }

  /** The ordinal of way `id`, or -1. */
  find(id: number): number {
    const n = this.ids.n;
    if (!this.sorted && !this.order) {
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      const ids = this.ids.a;
      this.order = order.sort((a, b) => ids[a]! - ids[b]!);
    }
    const at = (k: number) => (this.order ? this.order[k]! : k);
    let lo = 0,
      hi = n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.ids.a[at(mid)]!;
      if (v < id) lo = mid + 1;
      else if (v > id) hi = mid - 1;
      else return at(mid);
    }
    return -1;
  }

  read(ord: number): StoredWay {
    const from = this.start.a[ord]!;
    const to = ord + 1 < this.ids.n ? this.start.a[ord + 1]! : this.values;
    const latLon = new Float64Array(to - from);
    let i = from;
    while (i < to) {
      const b = Math.floor(i / BLOCK),
        off = i - b * BLOCK;
      const take = Math.min(to - i, BLOCK - off);
      const block = b === this.blocks.length ? this.cur : this.blocks[b];
      if (block) for (let k = 0; k < take; k++) latLon[i - from + k] = block[off + k]! / 1e7;
      else {
        const buf = new Int32Array(take);
        const bytes = new Uint8Array(buf.buffer);
        let got = 0;
        while (got < bytes.length) {
          const r = readSync(this.fd, bytes, got, bytes.length - got, (b * BLOCK + off) * 4 + got);
          if (r <= 0) throw new Error('way store spill file is truncated');
          got += r;
        }
        for (let k = 0; k < take; k++) latLon[i - from + k] = buf[k]! / 1e7;
      }
      i += take;
    }
    return { id: this.ids.a[ord]!, first: this.firstNode.a[ord]!, last: this.lastNode.a[ord]!, latLon };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    this.blocks = [];
    this.cur = new Int32Array(0);
  }

  private sealBlock(): void {
    const b = this.blocks.length;
    if (b < this.budgetBlocks) this.blocks.push(this.cur);
    else {
      if (this.fd < 0) {
        const dir = mkdtempSync(join(this.spillDir, '.svcmaps-ways-'));
        this.fd = openSync(join(dir, 'ways.bin'), 'w+');
        try {
          rmSync(dir, { recursive: true, force: true }); // unlinked while open: freed even if the process dies
        } catch (e) {
          // kept until close where an open file cannot be removed
          if (!isErrno(e, 'EBUSY', 'EPERM', 'ENOTEMPTY')) throw e;
        }
      }
      const bytes = new Uint8Array(this.cur.buffer);
      let put = 0;
      while (put < bytes.length) put += writeSync(this.fd, bytes, put, bytes.length - put, b * BLOCK * 4 + put);
      this.blocks.push(undefined);
    }
    this.cur = this.blocks[b] ? new Int32Array(BLOCK) : this.cur;
    this.curAt = 0;
  }
}
