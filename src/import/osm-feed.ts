import { createReadStream, statSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { OSMTransform, parse, type OSMOptions } from 'osm-pbf-parser-node';
import { NodeIndex } from './node-index.js';

export interface OsmNode {
  type: 'node';
  id: number;
  lat: number;
  lon: number;
  tags?: Record<string, string>;
}
interface OsmWay {
  type: 'way';
  id: number;
  refs: number[];
  tags?: Record<string, string>;
}
export interface OsmRelation {
  type: 'relation';
  id: number;
  members: Array<{ type: string; ref: number; role: string }>;
  tags?: Record<string, string>;
}
export type OsmEntity = OsmNode | OsmWay | OsmRelation;

/** The PBF header's box, in nanodegrees, when the file has one. */
interface PbfHeader {
  bbox?: { left: number; right: number; top: number; bottom: number };
}

/** Which tags an importer decodes, per entity type: all, none, or those keys. */
export interface TagFilter {
  node?: boolean;
  way?: boolean | string[];
  relation?: boolean | string[];
}

/**
 * One read of an OSM PBF, as every importer consumes it. The file is read and inflated once, and its nodes decoded
 * once, into one NodeIndex (every node's position) while the nodes with tags are handed on; the blocks of ways and
 * relations are handed on as inflated bytes, which each importer decodes with its own tag filter (roads decodes a
 * dozen keys of a way, render every key). A full import runs its importers side by side on such a read, one for
 * all of them when their memory estimates fit the budget together (parallel.ts: the read in a thread of its own,
 * the parts shared with each importer thread, shared-read.ts); an importer run alone reads the file itself
 * (localFeed).
 */
export interface OsmFeed {
  /** Nodes with tags, then ways and relations decoded with `tags`, in file order, in batches. */
  entities(tags: TagFilter): AsyncIterable<OsmEntity[]>;
  /** Every node's position: complete once entities() yields a way or relation, or ends. */
  nodes(): NodeIndex;
  /** Done with nodes(): its memory and spill file can go once every importer of the read is. */
  releaseNodes(): void;
  /** Known once entities() ended: the file's header; the extent of its nodes, [minLon, minLat, maxLon, maxLat]. */
  header(): PbfHeader | undefined;
  extent(): [number, number, number, number] | undefined;
}

/** A part of a read, as the reader hands it on. */
export type FeedPart =
  | { kind: 'nodes'; nodes: OsmNode[] }
  | { kind: 'index'; index: NodeIndex }
  | { kind: 'block'; buf: Uint8Array }
  | { kind: 'end'; header?: PbfHeader; extent?: [number, number, number, number] };

/**
 * Reads a PBF once: inflates each data block, puts the nodes of node blocks into `index` and hands on the tagged
 * ones, hands on the other blocks inflated; then the index (sealed) before the first block of ways or relations,
 * and the end. A node block after ways means the file is not sorted as PBF extracts are (nodes, ways, relations):
 * its ways could not find those nodes, so that is an error, as NodeIndex reports nodes out of id order.
 */
export async function* readParts(
  file: string,
  index: NodeIndex,
  onBytes: (done: number) => void,
  signal: AbortSignal,
): AsyncGenerator<FeedPart> {
  let done = 0;
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  input.on('data', (c) => onBytes((done += c.length)));
  const blobs = input.pipe(new OSMTransform({ writeRaw: true }));
  let header: PbfHeader | undefined;
  let indexSent = false;
  const ext: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  try {
    for await (const blob of blobs as AsyncIterable<Buffer | [PbfHeader]>) {
      if (signal.aborted) throw new Error('aborted');
      if (!Buffer.isBuffer(blob)) {
        header = blob[0];
        continue;
      }
      const buf = inflateSync(blob);
      const kinds = groupKinds(buf);
      if (kinds.nodes) {
        if (indexSent) throw new Error('the extract lists nodes after ways (sort it with `osmium sort`)');
        const tagged: OsmNode[] = [];
        for (const e of parse(buf, { node: true, way: false, relation: false } as OSMOptions) as OsmEntity[]) {
          if (e.type !== 'node') continue;
          index.add(e.id, e.lat, e.lon);
          if (e.lon < ext[0]) ext[0] = e.lon;
          if (e.lat < ext[1]) ext[1] = e.lat;
          if (e.lon > ext[2]) ext[2] = e.lon;
          if (e.lat > ext[3]) ext[3] = e.lat;
          if (e.tags) tagged.push(e);
        }
        if (tagged.length) yield { kind: 'nodes', nodes: tagged };
      }
      if (kinds.others) {
        if (!indexSent) yield { kind: 'index', index };
        indexSent = true;
        yield { kind: 'block', buf };
      }
    }
  } finally {
    input.destroy();
    blobs.destroy();
  }
  if (!indexSent) yield { kind: 'index', index };
  yield { kind: 'end', header, ...(ext[0] <= ext[2] ? { extent: ext } : {}) };
}

/**
 * Which primitive groups an inflated PrimitiveBlock holds (protobuf field 2 of the block; in a group, fields 1-2
 * are nodes, 3-4 ways and relations), read from the wire format without decoding the block.
 */
export function groupKinds(buf: Uint8Array): { nodes: boolean; others: boolean } {
  let pos = 0,
    nodes = false,
    others = false;
  const varint = () => {
    let v = 0,
      mul = 1,
      b: number;
    do {
      if (pos >= buf.length) throw new Error('a PBF block is truncated');
      b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      mul *= 128;
    } while (b & 0x80);
    return v;
  };
  const skip = (wire: number) => {
    if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 2) {
      const n = varint(); // before `pos` is read: `pos += varint()` would add to its old value
      pos += n;
    } else if (wire === 5) pos += 4;
    else throw new Error(`a PBF block has a field of wire type ${wire}`);
  };
  while (pos < buf.length) {
    const key = varint();
    if (key !== 0x12) {
      skip(key & 7);
      continue;
    }
    const end = varint() + pos;
    while (pos < end) {
      const k = varint(),
        field = Math.floor(k / 8);
      if (field === 1 || field === 2) nodes = true;
      else if (field === 3 || field === 4) others = true;
      skip(k & 7);
    }
  }
  return { nodes, others };
}

/** The entities of an inflated block with `tags` decoded, but its nodes (the read already took them). */
function blockEntities(buf: Uint8Array, tags: TagFilter): OsmEntity[] {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  const filter = { node: false, way: tags.way ?? false, relation: tags.relation ?? false };
  return (parse(b, filter as OSMOptions) as OsmEntity[]).filter((e) => e.type !== 'node');
}

/**
 * A feed over parts from wherever they come (this thread's read, or the read thread's): `release` is called once,
 * when the importer is done with the nodes.
 */
export class PartsFeed implements OsmFeed {
  private index: NodeIndex | undefined;
  private end: Extract<FeedPart, { kind: 'end' }> | undefined;
  private released = false;
  constructor(
    private readonly parts: AsyncIterable<FeedPart>,
    private readonly release: (index: NodeIndex | undefined) => void,
  ) {}

  async *entities(tags: TagFilter): AsyncIterable<OsmEntity[]> {
    for await (const p of this.parts) {
      if (p.kind === 'nodes') {
        if (tags.node) yield p.nodes;
      } else if (p.kind === 'index') this.index = p.index;
      else if (p.kind === 'block') yield blockEntities(p.buf, tags);
      else this.end = p;
    }
  }
  nodes(): NodeIndex {
    if (!this.index) throw new Error('node positions are read before ways');
    return this.index;
  }
  releaseNodes(): void {
    if (this.released) return;
    this.released = true;
    this.release(this.index);
  }
  header = () => this.end?.header;
  extent = () => this.end?.extent;
}

/**
 * An importer reading the file itself (run alone): the read in this thread, into its own node index of
 * `budgetBytes` (spilled to `spillDir`; NodeIndex's defaults without them), freed when the importer releases it.
 * `onBytes` gets the bytes read and the file's size.
 */
export function localFeed(
  file: string,
  o: { budgetBytes?: number; spillDir?: string; onBytes: (done: number, total: number) => void; signal: AbortSignal },
): OsmFeed {
  const total = statSync(file).size;
  const index = new NodeIndex({ budgetBytes: o.budgetBytes, spillDir: o.spillDir });
  return new PartsFeed(
    readParts(file, index, (done) => o.onBytes(done, total), o.signal),
    () => index.close(),
  );
}
