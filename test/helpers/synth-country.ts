import { createReadStream, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { OSMTransform } from 'osm-pbf-parser-node';

/**
 * A small synthetic country for end-to-end import tests, built from npm packages alone: the base extract is read
 * with osm-pbf-parser-node and `copies` shifted copies are written as a real .osm.pbf (a minimal PBF writer below:
 * dense nodes, ways, relations, zlib blobs). Copy k sits k * `dLon` degrees east of the base and has every id
 * (node, way, relation) raised by k * 2^32, so all copies but the first have ids above 2^32. Neighbouring copies are
 * joined by a trunk road ("Link k") from the easternmost major road node of copy k to the westernmost of copy k + 1.
 */
export interface SynthCountry {
  file: string;
  copies: number;
  dLon: number;
  idStride: number;
  /** A major-road node of the base extract near its west and east edges: [lat, lon]. */
  west: [number, number];
  east: [number, number];
}

type Tags = Record<string, string>;
interface Node {
  id: number;
  lat: number;
  lon: number;
  tags?: Tags;
}
interface Way {
  id: number;
  refs: number[];
  tags?: Tags;
}
interface Relation {
  id: number;
  members: Array<{ type: string; ref: number; role: string }>;
  tags?: Tags;
}

const MAJOR = new Set(['trunk', 'primary', 'secondary', 'tertiary']);

export async function writeSynthCountry(base: string, out: string, copies: number, dLon = 0.25): Promise<SynthCountry> {
  const nodes: Node[] = [],
    ways: Way[] = [],
    rels: Relation[] = [];
  const parsed = createReadStream(base).pipe(new OSMTransform({ withTags: true, withInfo: false }));
  for await (const batch of parsed as AsyncIterable<Array<{ type?: string }>>) {
    for (const e of batch) {
      if (e.type === 'node') nodes.push(e as Node);
      else if (e.type === 'way') ways.push(e as Way);
      else if (e.type === 'relation') rels.push(e as Relation);
    }
  }
  // The join points: ends of major roads nearest the base extract's west and east edges.
  const at = new Map(nodes.map((n) => [n.id, n]));
  let west: Node | undefined, east: Node | undefined;
  for (const w of ways) {
    if (!MAJOR.has(w.tags?.highway ?? '')) continue;
    for (const r of w.refs) {
      const n = at.get(r);
      if (!n) continue;
      if (!west || n.lon < west.lon) west = n;
      if (!east || n.lon > east.lon) east = n;
    }
  }
  if (!west || !east) throw new Error(`${base} has no major roads to join copies with`);
  const S = 2 ** 32;
  const blocks: Uint8Array[] = [blob('OSMHeader', header())];
  const allNodes: Node[] = [];
  for (let k = 0; k < copies; k++)
    for (const n of nodes) allNodes.push({ id: n.id + k * S, lat: n.lat, lon: n.lon + k * dLon, tags: n.tags });
  for (let i = 0; i < allNodes.length; i += 8000) blocks.push(blob('OSMData', denseBlock(allNodes.slice(i, i + 8000))));
  const allWays: Way[] = [];
  for (let k = 0; k < copies; k++)
    for (const w of ways) allWays.push({ id: w.id + k * S, refs: w.refs.map((r) => r + k * S), tags: w.tags });
  for (let k = 0; k + 1 < copies; k++)
    allWays.push({
      id: copies * S + k + 1,
      refs: [east.id + k * S, west.id + (k + 1) * S],
      tags: { highway: 'trunk', name: `Link ${k}`, ref: `L${k}` },
    });
  for (let i = 0; i < allWays.length; i += 8000) blocks.push(blob('OSMData', wayBlock(allWays.slice(i, i + 8000))));
  const allRels: Relation[] = [];
  for (let k = 0; k < copies; k++)
    for (const r of rels)
      allRels.push({ id: r.id + k * S, members: r.members.map((m) => ({ ...m, ref: m.ref + k * S })), tags: r.tags });
  for (let i = 0; i < allRels.length; i += 8000) blocks.push(blob('OSMData', relBlock(allRels.slice(i, i + 8000))));
  writeFileSync(out, Buffer.concat(blocks));
  return {
    file: out,
    copies,
    dLon,
    idStride: S,
    west: [west.lat, west.lon],
    east: [east.lat, east.lon],
  };
}

/** Protocol buffer encoding, enough for the OSM PBF messages (numbers up to 2^53). */
class Enc {
  private buf = new Uint8Array(1 << 12);
  private len = 0;
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }
  varint(v: number): this {
    this.room(10);
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
    return this;
  }
  svarint(v: number): this {
    return this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  key(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }
  uint(field: number, v: number): this {
    return this.key(field, 0).varint(v);
  }
  bytes(field: number, data: Uint8Array): this {
    this.key(field, 2).varint(data.length);
    this.room(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
    return this;
  }
  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }
  /** Packed repeated field; `delta` encodes differences; `signed` zigzag-encodes. */
  packed(field: number, values: number[], signed: boolean, delta = false): this {
    const e = new Enc();
    let prev = 0;
    for (const v of values) {
      const x = delta ? v - prev : v;
      prev = v;
      if (signed) e.svarint(x);
      else e.varint(x);
    }
    return this.bytes(field, e.done());
  }
  done(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

function blob(type: string, data: Uint8Array): Uint8Array {
  const body = new Enc().uint(2, data.length).bytes(3, deflateSync(data)).done();
  const head = new Enc().string(1, type).uint(3, body.length).done();
  const len = Buffer.alloc(4);
  len.writeUInt32BE(head.length);
  return Buffer.concat([len, head, body]);
}

function header(): Uint8Array {
  return new Enc().string(4, 'OsmSchema-V0.6').string(4, 'DenseNodes').string(16, 'svcmaps test synth-country').done();
}

/** A PrimitiveBlock around one group, with its string table (index 0 is the empty string). */
function primitiveBlock(group: (s: (t: string) => number) => Uint8Array): Uint8Array {
  const strings = [''];
  const index = new Map<string, number>([['', 0]]);
  const sid = (t: string) => {
    let i = index.get(t);
    if (i === undefined) index.set(t, (i = strings.push(t) - 1));
    return i;
  };
  const g = group(sid);
  const table = new Enc();
  for (const t of strings) table.string(1, t);
  return new Enc().bytes(1, table.done()).bytes(2, g).done();
}

function denseBlock(ns: Node[]): Uint8Array {
  return primitiveBlock((sid) => {
    const kv: number[] = [];
    for (const n of ns) {
      for (const [k, v] of Object.entries(n.tags ?? {})) kv.push(sid(k), sid(v));
      kv.push(0);
    }
    const dense = new Enc()
      .packed(
        1,
        ns.map((n) => n.id),
        true,
        true,
      )
      .packed(
        8,
        ns.map((n) => Math.round(n.lat * 1e7)),
        true,
        true,
      )
      .packed(
        9,
        ns.map((n) => Math.round(n.lon * 1e7)),
        true,
        true,
      )
      .packed(10, kv, false)
      .done();
    return new Enc().bytes(2, dense).done();
  });
}

function tagged(e: Enc, tags: Tags | undefined, sid: (t: string) => number): Enc {
  const t = Object.entries(tags ?? {});
  return e
    .packed(
      2,
      t.map(([k]) => sid(k)),
      false,
    )
    .packed(
      3,
      t.map(([, v]) => sid(v)),
      false,
    );
}

function wayBlock(ws: Way[]): Uint8Array {
  return primitiveBlock((sid) => {
    const g = new Enc();
    for (const w of ws) g.bytes(3, tagged(new Enc().uint(1, w.id), w.tags, sid).packed(8, w.refs, true, true).done());
    return g.done();
  });
}

function relBlock(rs: Relation[]): Uint8Array {
  const TYPES: Record<string, number> = { node: 0, way: 1, relation: 2 };
  return primitiveBlock((sid) => {
    const g = new Enc();
    for (const r of rs) {
      const e = tagged(new Enc().uint(1, r.id), r.tags, sid)
        .packed(
          8,
          r.members.map((m) => sid(m.role)),
          false,
        )
        .packed(
          9,
          r.members.map((m) => m.ref),
          true,
          true,
        )
        .packed(
          10,
          r.members.map((m) => TYPES[m.type] ?? 0),
          false,
        );
      g.bytes(4, e.done());
    }
    return g.done();
  });
}
