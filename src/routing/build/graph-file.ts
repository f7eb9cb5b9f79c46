import {
  closeSync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * A small binary container for the road graph: magic, a JSON header (metadata + section table), then raw typed
 * array sections, each starting on a cache line (64 bytes), so a record of 32 bytes (route-summary.ts cEnd) never
 * straddles two. Loading reads the file once and takes zero-copy typed-array views over that single buffer, so
 * start-up costs one read and no parsing of the bulk data. With `shared` the buffer is a SharedArrayBuffer: the
 * views can be handed to worker threads, which then map the same memory (no copy per thread).
 */
const MAGIC = 'SVCRGRF2';
/**
 * Files written before sections started on 64 bytes, which started them on 8: still read. Their own magic keeps a
 * build of that time from reading a file written now at the wrong offsets (it says the file is no road graph).
 */
const MAGIC_ALIGNED_8 = 'SVCRGRF1';
const isGraphMagic = (m: string) => m === MAGIC || m === MAGIC_ALIGNED_8;
const ALIGN = 64;

type Typed = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;
const CTORS = { Uint8Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array } as const;
type CtorName = keyof typeof CTORS;

export type Sections = Record<string, Typed>;

interface SectionEntry {
  name: string;
  type: CtorName;
  offset: number;
  length: number;
}

const padTo = (n: number, a: number) => Math.ceil(n / a) * a;

/** Writes to `<path>.tmp-<pid>`, fsyncs, then renames over `path`: readers see the old or the new file, never half. */
export function writeGraphFile(path: string, meta: Record<string, unknown>, sections: Sections): void {
  const entries: SectionEntry[] = [];
  let offset = 0;
  for (const [name, arr] of Object.entries(sections)) {
    entries.push({ name, type: arr.constructor.name as CtorName, offset, length: arr.length });
    offset = padTo(offset + arr.byteLength, ALIGN);
  }
  const header = Buffer.from(JSON.stringify({ meta, sections: entries }), 'utf8');
  const dataStart = padTo(8 + 4 + header.length, ALIGN);
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    const head = Buffer.alloc(dataStart);
    head.write(MAGIC, 0, 'latin1');
    head.writeUInt32LE(header.length, 8);
    header.copy(head, 12);
    writeSync(fd, head);
    let pos = dataStart;
    for (const e of entries) {
      const arr = sections[e.name]!;
      const at = dataStart + e.offset;
      if (at > pos) writeSync(fd, Buffer.alloc(at - pos));
      writeSync(fd, Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
      pos = at + arr.byteLength;
    }
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

export interface GraphFileContents {
  meta: Record<string, unknown>;
  sections: Sections;
}

export function readGraphFile(path: string, opts: { shared?: boolean } = {}): GraphFileContents {
  return parseGraphFile(path, opts.shared ? readShared(path) : readFileSync(path));
}

/**
 * The same file read into one SharedArrayBuffer without blocking the event loop: the bytes are read by libuv's
 * thread pool, READS_IN_FLIGHT chunks at a time; only the small header is parsed on the calling thread. Reading
 * is mostly the kernel's copy into memory the process touches for the first time (page faults, and on a VM the
 * host's), which several reads do side by side: the 1.4 GB graph of 600 copies on 2 cores, median 0.28 s against
 * 0.65 s for one 64 MB read at a time with huge pages, 0.59 against 0.97 s without (`npm run bench:graph-load`).
 */
export async function readGraphFileShared(
  path: string,
  { chunk = READ_CHUNK, inFlight = READS_IN_FLIGHT }: { chunk?: number; inFlight?: number } = {},
): Promise<GraphFileContents> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const bytes = new Uint8Array(new SharedArrayBuffer(size));
    let next = 0;
    const reader = async () => {
      try {
        while (next < size) {
          const start = next,
            end = Math.min(size, start + chunk);
          next = end;
          for (let at = start; at < end;) {
            const { bytesRead } = await fh.read(bytes, at, end - at, at);
            if (bytesRead === 0) throw new Error(`${path}: short read`);
            at += bytesRead;
          }
        }
      } catch (e) {
        next = size; // the other readers stop at their next chunk
        throw e;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, reader));
    return parseGraphFile(path, Buffer.from(bytes.buffer, 0, size));
  } finally {
    await fh.close();
  }
}

/**
 * The header of a graph file, its metadata and the names of its sections, without reading the sections (a status
 * report of a multi-gigabyte graph), or undefined when the file is no road graph.
 */
export function readGraphHeader(path: string): { meta: Record<string, unknown>; sections: string[] } | undefined {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) < 12) return undefined;
    const magic = head.toString('latin1', 0, 8);
    const len = head.readUInt32LE(8);
    if (!isGraphMagic(magic) || len > 64 * 1024 * 1024) return undefined;
    const json = Buffer.alloc(len);
    readSync(fd, json, 0, len, 12);
    const h = JSON.parse(json.toString('utf8')) as { meta?: Record<string, unknown>; sections?: { name: string }[] };
    return h.meta && { meta: h.meta, sections: (h.sections ?? []).map((e) => e.name) };
  } catch (e) {
    if (e instanceof SyntaxError) return undefined; // a header that is not JSON: no road graph
    throw e;
  } finally {
    closeSync(fd);
  }
}

/** Bytes per read call of the background load (each call occupies one libuv thread until it returns). */
const READ_CHUNK = 16 * 1024 * 1024;
/** libuv's thread pool has four threads by default: the load may take them all for the fraction of a second. */
const READS_IN_FLIGHT = 4;

function parseGraphFile(path: string, bytes: Buffer): GraphFileContents {
  let buf = bytes;
  const magic = buf.length < 12 ? '' : buf.toString('latin1', 0, 8);
  if (!isGraphMagic(magic)) throw new Error(`${path} is not a svcmaps road graph`);
  if (buf.byteOffset % 8 !== 0) {
    // typed-array views need aligned offsets: copy into a fresh (aligned) ArrayBuffer
    const ab = new ArrayBuffer(buf.length);
    new Uint8Array(ab).set(buf);
    buf = Buffer.from(ab);
  }
  const headerLen = buf.readUInt32LE(8);
  const { meta, sections, align } = JSON.parse(buf.toString('utf8', 12, 12 + headerLen)) as {
    meta: Record<string, unknown>;
    sections: SectionEntry[];
    /** Files of a few builds before the new magic said their 64 in the header. */
    align?: number;
  };
  const dataStart = padTo(12 + headerLen, magic === MAGIC ? ALIGN : (align ?? 8));
  const out: Sections = {};
  for (const e of sections) {
    const Ctor = CTORS[e.type];
    if (!Ctor) throw new Error(`${path}: unknown section type ${e.type}`);
    // (an ArrayBuffer, or a SharedArrayBuffer when shared: the constructors take either)
    out[e.name] = new Ctor(buf.buffer as ArrayBuffer, buf.byteOffset + dataStart + e.offset, e.length);
  }
  return { meta, sections: out };
}

/** The whole file in one SharedArrayBuffer (offset 0, so every section view is aligned). */
function readShared(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = new Uint8Array(new SharedArrayBuffer(size));
    for (let at = 0; at < size;) {
      const n = readSync(fd, bytes, at, size - at, at);
      if (n === 0) throw new Error(`${path}: short read`);
      at += n;
    }
    return Buffer.from(bytes.buffer, 0, size);
  } finally {
    closeSync(fd);
  }
}
