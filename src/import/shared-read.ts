import type { MessagePort } from 'node:worker_threads';
import { NodeIndex, type NodeIndexShare } from './node-index.js';
import { PartsFeed, readParts, type FeedPart, type OsmFeed } from './osm-feed.js';

/**
 * One read of a PBF shared by importer threads (parallel.ts): the read thread (read-thread.ts) reads it (osm-feed.ts
 * readParts) and posts each part to every importer thread. Blocks go as shared memory (no copy per thread), the node
 * index as a share of its chunks and spill file (NodeIndex.share), tagged nodes as a copy, to the threads that
 * decode node tags.
 * Each thread acknowledges every part it has consumed. The read runs at most WINDOW parts ahead of the fastest
 * thread, and the parts some thread has not consumed yet may hold up to `backlogBytes`: past that, it waits for the
 * slowest. So the road graph, which decodes a dozen tags of each way and is the longest import, is not held to the
 * pace of render and places while they draw and index each way: at the default budget its read finishes well
 * before theirs (the ways and relations of the 600-copy country are 211 MB inflated), and its contraction starts
 * that much sooner.
 */
const WINDOW = 32;

/** A part as it crosses threads. */
type WirePart = Exclude<FeedPart, { kind: 'index' }> | { kind: 'index'; share: NodeIndexShare };

/** Read thread -> importer thread; the importer answers 'ack' per part and 'released' once done with the nodes. */
interface PartMessage {
  t: 'part';
  part: WirePart;
}

/** One importer thread as the read sees it. */
interface ReadConsumer {
  post(m: PartMessage): void;
  /** It decodes node tags (render, places; roads needs positions only). */
  taggedNodes: boolean;
  /** Gone (finished, failed): nothing more is sent to it. */
  gone: boolean;
}

/**
 * Reads `file` once for `consumers`, into `index`; `onBytes` gets the bytes read. `done` resolves when the end was
 * posted and throws what the read threw (a broken file). Call `ack(c)` for each part consumer c acknowledged.
 */
function shareRead(
  file: string,
  index: NodeIndex,
  consumers: ReadConsumer[],
  o: { backlogBytes: number; onBytes: (done: number) => void; signal: AbortSignal },
): { done: Promise<void>; ack: (c: ReadConsumer) => void } {
  // per thread, the sizes of the parts it has not consumed yet, oldest first (acks come in order)
  const pending = new Map<ReadConsumer, { sizes: number[]; bytes: number }>(
    consumers.map((c) => [c, { sizes: [], bytes: 0 }]),
  );
  let wake: (() => void) | undefined;
  const ack = (c: ReadConsumer) => {
    const q = pending.get(c)!;
    q.bytes -= q.sizes.shift() ?? 0;
    wake?.();
  };
  const ahead = () => {
    let fastest = Infinity,
      backlog = 0;
    for (const c of consumers) {
      if (c.gone) continue;
      const q = pending.get(c)!;
      fastest = Math.min(fastest, q.sizes.length);
      backlog = Math.max(backlog, q.bytes); // parts are shared: the slowest thread's hold all the others'
    }
    return fastest !== Infinity && (fastest >= WINDOW || backlog > o.backlogBytes);
  };
  o.signal.addEventListener('abort', () => wake?.());
  const done = (async () => {
    for await (const part of readParts(file, index, o.onBytes, o.signal)) {
      const wire: WirePart = part.kind === 'index' ? { kind: 'index', share: index.share() } : toWire(part);
      const size = part.kind === 'block' ? part.buf.length : part.kind === 'nodes' ? 100 * part.nodes.length : 0;
      for (const c of consumers) {
        if (c.gone || (part.kind === 'nodes' && !c.taggedNodes)) continue;
        const q = pending.get(c)!;
        q.sizes.push(size);
        q.bytes += size;
        c.post({ t: 'part', part: wire });
      }
      while (ahead() && !o.signal.aborted) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      if (o.signal.aborted) throw new Error('aborted');
    }
  })();
  return { done, ack };
}

/** Blocks into shared memory: posted to every thread without a copy each. */
function toWire(part: Exclude<FeedPart, { kind: 'index' }>): WirePart {
  if (part.kind !== 'block') return part;
  const buf = new Uint8Array(new SharedArrayBuffer(part.buf.length));
  buf.set(part.buf);
  return { kind: 'block', buf };
}

/**
 * The feed of an importer thread: parts as the read thread posts them on `port`, acknowledged as the importer
 * consumes them, until `signal` aborts or `stopped()` says so. The node index is attached read-only and released to the read thread when the importer is done
 * with it.
 */
export function remoteFeed(port: MessagePort, signal: AbortSignal, stopped: () => boolean = () => false): OsmFeed {
  const queue: WirePart[] = [];
  let wake: (() => void) | undefined;
  port.on('message', (m: PartMessage) => {
    queue.push(m.part);
    wake?.();
  });
  signal.addEventListener('abort', () => wake?.());
  async function* parts(): AsyncGenerator<FeedPart> {
    for (;;) {
      while (!queue.length && !signal.aborted) await new Promise<void>((r) => (wake = r));
      // `stopped` too: parts already queued are consumed without a turn of the event loop, so an 'abort' message
      // would wait behind all of them
      if (signal.aborted || stopped()) throw new Error('aborted');
      const p = queue.shift()!;
      yield p.kind === 'index' ? { kind: 'index', index: NodeIndex.attach(p.share) } : p;
      port.postMessage('ack');
      if (p.kind === 'end') return;
    }
  }
  return new PartsFeed(parts(), (index) => {
    index?.close(); // this thread's read cache only
    port.postMessage('released');
  });
}

/** What the read thread is started with (read-thread.ts). */
export interface ReadJob {
  file: string;
  dataDir: string;
  nodeBudgetBytes: number;
  backlogBytes: number;
  consumers: Array<{ name: string; taggedNodes: boolean; port: MessagePort }>;
}

/** Read thread -> parent: bytes read so far, the end of the read (every part posted), or why it failed. */
export type ReadMessage = { t: 'bytes'; done: number } | { t: 'end' } | { t: 'error'; message: string };

/**
 * The read thread's work (read-thread.ts): reads `job.file` once for its consumers, telling `parent` the bytes read
 * and the end; 'abort' from `parent` stops it. Once the read has ended and every consumer is done with the node
 * index (or gone), it closes the index and every port, `parent` included, so the thread ends.
 */
export function readForThreads(job: ReadJob, parent: MessagePort): void {
  const post = (m: ReadMessage) => parent.postMessage(m);
  const abort = new AbortController();
  parent.on('message', (m) => {
    if (m === 'abort') abort.abort();
  });
  const index = new NodeIndex({ budgetBytes: job.nodeBudgetBytes, spillDir: job.dataDir });
  let holding = job.consumers.length; // importers that may still read the index
  let ended = false;
  const finish = () => {
    if (!ended || holding > 0) return;
    index.close();
    for (const c of job.consumers) c.port.close();
    parent.close();
  };
  const acks = { ack: (_c: ReadConsumer) => {} };
  const consumers = job.consumers.map(({ taggedNodes, port }) => {
    const me: ReadConsumer = { taggedNodes, gone: false, post: (m) => port.postMessage(m) };
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      holding--;
      finish();
    };
    port.on('message', (m: 'ack' | 'released') => (m === 'ack' ? acks.ack(me) : release()));
    port.on('close', () => {
      me.gone = true;
      acks.ack(me); // a read waiting on it goes on
      release();
    });
    return me;
  });
  const read = shareRead(job.file, index, consumers, {
    backlogBytes: job.backlogBytes,
    onBytes: (done) => post({ t: 'bytes', done }),
    signal: abort.signal,
  });
  acks.ack = read.ack;
  read.done
    .then(
      () => post({ t: 'end' }),
      (e: Error) => {
        post({ t: 'error', message: e?.message ?? String(e) });
        holding = 0; // the importers are being stopped: the index goes now
      },
    )
    .finally(() => {
      ended = true;
      finish();
    });
}
