import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { inflateSync } from 'node:zlib';
import { createOSMStream } from 'osm-pbf-parser-node';
import { afterAll, describe, expect, it } from 'vitest';
import { NodeIndex } from '../../src/import/node-index.js';
import {
  groupKinds,
  localFeed,
  readParts,
  type FeedPart,
  type OsmFeed,
  type OsmNode,
  type TagFilter,
} from '../../src/import/osm-feed.js';
import { readForThreads, remoteFeed, type ReadJob, type ReadMessage } from '../../src/import/shared-read.js';
import { MONACO_PBF } from '../helpers/fixtures.js';

/** A PBF's frames (length, BlobHeader, Blob), as bytes, in file order; `zlib`: the Blob's deflated data. */
function frames(file: Buffer): Array<{ bytes: Buffer; zlib?: Buffer }> {
  const out: Array<{ bytes: Buffer; zlib?: Buffer }> = [];
  for (let pos = 0; pos < file.length;) {
    const headerLen = file.readUInt32BE(pos);
    const header = file.subarray(pos + 4, pos + 4 + headerLen);
    const fields = protoFields(header);
    const dataSize = fields.get(3) as number;
    const blob = file.subarray(pos + 4 + headerLen, pos + 4 + headerLen + dataSize);
    out.push({ bytes: file.subarray(pos, pos + 4 + headerLen + dataSize), zlib: protoFields(blob).get(3) as Buffer });
    pos += 4 + headerLen + dataSize;
  }
  return out;
}

/** Top-level protobuf fields: varints as numbers, length-delimited ones as bytes (the last of each wins). */
function protoFields(b: Buffer): Map<number, number | Buffer> {
  const m = new Map<number, number | Buffer>();
  let pos = 0;
  const varint = () => {
    let v = 0,
      mul = 1,
      x: number;
    do {
      x = b[pos++]!;
      v += (x & 0x7f) * mul;
      mul *= 128;
    } while (x & 0x80);
    return v;
  };
  while (pos < b.length) {
    const key = varint();
    if ((key & 7) === 0) m.set(key >>> 3, varint());
    else {
      const n = varint();
      m.set(key >>> 3, b.subarray(pos, pos + n));
      pos += n;
    }
  }
  return m;
}

describe('one read of a PBF (osm-feed)', () => {
  const root = mkdtempSync(join(tmpdir(), 'svcmaps-feed-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('indexes every node once, hands on the tagged ones, then the index, the way blocks and the end', async () => {
    const all: OsmNode[] = [];
    let ways = 0,
      relations = 0;
    for await (const e of createOSMStream(MONACO_PBF, { withTags: true }) as AsyncIterable<{ type: string }>) {
      if (e.type === 'node') all.push(e as OsmNode);
      else if (e.type === 'way') ways++;
      else if (e.type === 'relation') relations++;
    }
    const index = new NodeIndex({ budgetBytes: 64 * 1024, spillDir: root }); // spills: Monaco has ~30k nodes
    const parts: FeedPart[] = [];
    let read = 0;
    for await (const p of readParts(MONACO_PBF, index, (d) => (read = d), new AbortController().signal)) parts.push(p);
    expect(read).toBe(readFileSync(MONACO_PBF).length);
    const kinds = parts.map((p) => p.kind).filter((k, i, a) => k !== a[i - 1]);
    expect(kinds).toEqual(['nodes', 'index', 'block', 'end']);
    expect(index.size).toBe(all.length);
    expect(index.spilledChunks).toBeGreaterThan(0);
    const ll = [0, 0];
    for (const n of all.filter((_, i) => i % 97 === 0)) {
      expect(index.lookup(n.id, ll)).toBe(true);
      expect(ll).toEqual([Math.round(n.lat * 1e7) / 1e7, Math.round(n.lon * 1e7) / 1e7]);
    }
    const tagged = parts.flatMap((p) => (p.kind === 'nodes' ? p.nodes : []));
    expect(tagged).toEqual(all.filter((n) => n.tags));
    const end = parts[parts.length - 1] as Extract<FeedPart, { kind: 'end' }>;
    const ext = all.reduce(
      (b, n) => [Math.min(b[0], n.lon), Math.min(b[1], n.lat), Math.max(b[2], n.lon), Math.max(b[3], n.lat)],
      [Infinity, Infinity, -Infinity, -Infinity],
    );
    expect(end.extent).toEqual(ext);
    index.close();

    // an importer's view: its own tags of the ways and relations, nodes only with tags
    const feed = localFeed(MONACO_PBF, {
      budgetBytes: 1 << 20,
      spillDir: root,
      onBytes: () => {},
      signal: new AbortController().signal,
    });
    const seen = { node: 0, way: 0, relation: 0, wayTagKeys: new Set<string>() };
    for await (const batch of feed.entities({ node: false, way: ['highway'], relation: true }))
      for (const e of batch) {
        seen[e.type]++;
        if (e.type === 'way') for (const k of Object.keys(e.tags ?? {})) seen.wayTagKeys.add(k);
      }
    expect(seen.node).toBe(0);
    expect([seen.way, seen.relation]).toEqual([ways, relations]);
    expect([...seen.wayTagKeys]).toEqual(['highway']);
    expect(feed.nodes().size).toBe(all.length);
    feed.releaseNodes();
  });

  /** Entities by type from `feed`, and how many way nodes it found in the node index; then it lets the nodes go. */
  async function consume(feed: OsmFeed, tags: TagFilter) {
    const n = { node: 0, way: 0, relation: 0, found: 0 };
    const ll = [0, 0];
    for await (const batch of feed.entities(tags))
      for (const e of batch) {
        n[e.type]++;
        if (e.type === 'way') for (const r of e.refs) if (feed.nodes().lookup(r, ll)) n.found++;
      }
    feed.releaseNodes();
    return n;
  }

  it('one read over ports: each consumer gets what its own read would give, the slow and the gone ones too', async () => {
    const all = { node: true, way: true, relation: true };
    const own = await consume(
      localFeed(MONACO_PBF, {
        budgetBytes: 1 << 20,
        spillDir: root,
        onBytes: () => {},
        signal: new AbortController().signal,
      }),
      all,
    );
    const parent = new MessageChannel();
    const chans = [0, 1, 2].map(() => new MessageChannel());
    // a 64 kB node index (it spills) and backlog (the read keeps waiting for the slowest)
    const job: ReadJob = {
      file: MONACO_PBF,
      dataDir: root,
      nodeBudgetBytes: 64 * 1024,
      backlogBytes: 64 * 1024,
      consumers: chans.map((c, i) => ({ name: `c${i}`, taggedNodes: i !== 1, port: c.port1 })),
    };
    const messages: ReadMessage[] = [];
    parent.port1.on('message', (m: ReadMessage) => messages.push(m));
    const closed = new Promise((r) => parent.port1.once('close', r));
    readForThreads(job, parent.port2);
    const signal = new AbortController().signal;
    const slow = async (feed: OsmFeed) => {
      await new Promise((r) => setTimeout(r, 300));
      return consume(feed, all);
    };
    const gone = async () => {
      // an importer that fails after a few batches: its port closes and the read goes on without it
      let k = 0;
      for await (const b of remoteFeed(chans[2]!.port2, signal).entities(all)) if (b.length && ++k === 3) break;
      chans[2]!.port2.close();
    };
    const [first, second] = await Promise.all([
      slow(remoteFeed(chans[0]!.port2, signal)),
      consume(remoteFeed(chans[1]!.port2, signal), all),
      gone(),
    ]);
    expect(first).toEqual(own);
    expect(second).toEqual({ ...own, node: 0 }); // it asked for no tagged nodes: positions only, from the index
    await closed; // every consumer done with the index: the read closed its ports, its thread would end
    expect(messages[messages.length - 1]).toEqual({ t: 'end' });
    expect(messages.filter((m) => m.t === 'bytes').pop()).toEqual({
      t: 'bytes',
      done: readFileSync(MONACO_PBF).length,
    });
    expect(readdirSync(root).filter((f) => f.startsWith('.svcmaps-'))).toEqual([]); // the spill file went too
  });

  it('a read told to abort says so, and closes its ports', async () => {
    const parent = new MessageChannel();
    const chan = new MessageChannel();
    const messages: ReadMessage[] = [];
    parent.port1.on('message', (m: ReadMessage) => messages.push(m));
    const closed = new Promise((r) => parent.port1.once('close', r));
    readForThreads(
      {
        file: MONACO_PBF,
        dataDir: root,
        nodeBudgetBytes: 1 << 20,
        backlogBytes: 1024,
        consumers: [{ name: 'idle', taggedNodes: true, port: chan.port1 }],
      },
      parent.port2,
    );
    parent.port1.postMessage('abort'); // the consumer never reads: the read waits on it until told
    await closed;
    expect(messages.filter((m) => m.t !== 'bytes')).toEqual([{ t: 'error', message: 'aborted' }]);
    chan.port2.close();
  });

  it('an importer told to stop stops at its next part, with parts still queued', async () => {
    const chan = new MessageChannel();
    let stop = false;
    const feed = remoteFeed(chan.port2, new AbortController().signal, () => stop);
    const node: OsmNode = { type: 'node', id: 1, lat: 1, lon: 2, tags: { name: 'x' } };
    for (let i = 0; i < 5; i++) chan.port1.postMessage({ t: 'part', part: { kind: 'nodes', nodes: [node] } });
    let seen = 0;
    const consume = async () => {
      for await (const b of feed.entities({ node: true })) {
        seen += b.length;
        stop = true; // as the parent's cancel word is set, with four parts already here
      }
    };
    await expect(consume()).rejects.toThrow('aborted');
    expect(seen).toBe(1);
    chan.port1.close();
  });

  it('tells node blocks from way blocks without decoding them', () => {
    const kinds = frames(readFileSync(MONACO_PBF))
      .slice(1) // the header block
      .map((f) => groupKinds(inflateSync(f.zlib!)));
    expect(kinds[0]).toEqual({ nodes: true, others: false });
    expect(kinds[kinds.length - 1]).toEqual({ nodes: false, others: true });
    expect(kinds.every((k) => k.nodes !== k.others)).toBe(true);
  });

  it('a file listing nodes after ways fails in one line: its ways could not find them', async () => {
    const f = frames(readFileSync(MONACO_PBF));
    const [header, firstNodes, ...rest] = f;
    const moved = join(root, 'nodes-last.osm.pbf');
    writeFileSync(moved, Buffer.concat([header!.bytes, ...rest.map((x) => x.bytes), firstNodes!.bytes]));
    const index = new NodeIndex({ spillDir: root });
    const read = async () => {
      for await (const p of readParts(moved, index, () => {}, new AbortController().signal)) void p;
    };
    await expect(read()).rejects.toThrow(/^the extract lists nodes after ways \(sort it with `osmium sort`\)$/);
    index.close();
  });
});
