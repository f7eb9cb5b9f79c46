import type { MessagePort } from 'node:worker_threads';
import { NodeIndex, type NodeIndexShare } from './node-index.js';
import { PartsFeed, readParts, type FeedPart, type OsmFeed } from './osm-feed.js';

/**
 * One read of a PBF shared by importer threads (parallel.ts): the parent thread reads it (osm-feed.ts readParts)
 * and posts each part to every thread. Blocks go as shared memory (no copy per thread), the node index as a share
 * of its chunks and spill file (NodeIndex.share), tagged nodes as a copy, to the threads that decode node tags.
 * Each thread acknowledges every part it has consumed; the read waits while any thread is WINDOW parts behind, so
 * the slowest importer sets the pace and parts in flight stay a few MB whatever the file's size.
 */
const WINDOW = 32;

/** A part as it crosses threads. */
export type WirePart = Exclude<FeedPart, { kind: 'index' }> | { kind: 'index'; share: NodeIndexShare };

/** Parent -> importer thread; the thread answers 'ack' per part and 'released' once done with the nodes. */
export interface PartMessage {
  t: 'part';
  part: WirePart;
}

/** One importer thread as the read sees it. */
export interface ReadConsumer {
  post(m: PartMessage): void;
  /** It decodes node tags (render, places; roads needs positions only). */
  taggedNodes: boolean;
  /** Gone (finished, failed): nothing more is sent to it. */
  gone: boolean;
}

/**
 * Reads `file` once for `consumers`, into `index`; `onBytes` gets the bytes read. Resolves when the end was posted;
 * throws what the read threw (a broken file). Call `ack(c)` for each part consumer c acknowledged.
 */
export function shareRead(
  file: string,
  index: NodeIndex,
  consumers: ReadConsumer[],
  onBytes: (done: number) => void,
  signal: AbortSignal,
): { done: Promise<void>; ack: (c: ReadConsumer) => void } {
  const behind = new Map<ReadConsumer, number>(consumers.map((c) => [c, 0]));
  let wake: (() => void) | undefined;
  const ack = (c: ReadConsumer) => {
    behind.set(c, behind.get(c)! - 1);
    wake?.();
  };
  const lagging = () => consumers.some((c) => !c.gone && behind.get(c)! >= WINDOW);
  const done = (async () => {
    for await (const part of readParts(file, index, onBytes, signal)) {
      const wire: WirePart = part.kind === 'index' ? { kind: 'index', share: index.share() } : toWire(part);
      for (const c of consumers) {
        if (c.gone || (part.kind === 'nodes' && !c.taggedNodes)) continue;
        behind.set(c, behind.get(c)! + 1);
        c.post({ t: 'part', part: wire });
      }
      while (lagging() && !signal.aborted) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      if (signal.aborted) throw new Error('aborted');
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
 * The feed of an importer thread: parts as the parent posts them (feed() for each PartMessage), acknowledged as the
 * importer consumes them. The node index is attached read-only and released to the parent when the importer is
 * done with it.
 */
export function remoteFeed(port: MessagePort, signal: AbortSignal): { feed: OsmFeed; receive: (m: PartMessage) => void } {
  const queue: WirePart[] = [];
  let wake: (() => void) | undefined;
  signal.addEventListener('abort', () => wake?.());
  async function* parts(): AsyncGenerator<FeedPart> {
    for (;;) {
      while (!queue.length && !signal.aborted) await new Promise<void>((r) => (wake = r));
      if (signal.aborted) throw new Error('aborted');
      const p = queue.shift()!;
      yield p.kind === 'index' ? { kind: 'index', index: NodeIndex.attach(p.share) } : p;
      port.postMessage('ack');
      if (p.kind === 'end') return;
    }
  }
  const feed = new PartsFeed(parts(), (index) => {
    index?.close(); // this thread's read cache only
    port.postMessage('released');
  });
  return {
    feed,
    receive: (m) => {
      queue.push(m.part);
      wake?.();
    },
  };
}
