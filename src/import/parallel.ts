import { startModuleWorker } from '../core/module-worker.js';
import { NodeIndex } from './node-index.js';
import { shareRead, type ReadConsumer } from './shared-read.js';
import type { Importer, ImportSummary } from './types.js';

/** Share of the `--memory` budget the shared read's node index keeps resident (the rest of it spills). */
const NODE_INDEX_SHARE = 0.25;
/** Share of it that parts of the read some importers have not consumed yet may hold (shared-read.ts). */
const BACKLOG_SHARE = 0.125;

/** What an import thread is started with. */
export interface ThreadJob {
  name: string;
  file: string;
  dataDir: string;
  memoryBytes: number;
}

/** Importer thread -> parent: besides these, 'ack' (a part of the read consumed) and 'released' (done with nodes). */
export type ThreadMessage =
  | { t: 'progress'; stage: string; done: number; total: number }
  | { t: 'admit' }
  | { t: 'done'; summary: ImportSummary }
  | { t: 'error'; message: string };

/** Longest first, so the last to finish is admitted first (measured at country scale: roads, render, places). */
const WEIGHT: Record<string, number> = { roads: 3, render: 2, places: 1 };

/**
 * Peak memory of each importer per byte of PBF, measured alone on the 600-copy synthetic country (278 MB: roads
 * 2.2 GB, render 1.3 GB, places 1.0 GB), rounded up. The `--memory` budget bounds the node index and way
 * geometries that spill to disk; the contraction's edge arrays, the places database build and the render features
 * grow with the extract regardless. Side by side, the importers' peaks add up (7.1 GB for the 1,200-copy country),
 * so an importer's build phase starts only when its estimate fits beside the running ones.
 */
const PEAK_PER_PBF_BYTE: Record<string, number> = { roads: 8.5, render: 5, places: 4 };

/** The estimated peak of an importer over a file of `pbfBytes` (unknown importers: as much as roads). */
export const estimatedPeak = (name: string, pbfBytes: number): number =>
  Math.ceil((PEAK_PER_PBF_BYTE[name] ?? PEAK_PER_PBF_BYTE.roads!) * pbfBytes);

/**
 * Runs importers side by side, one thread each, on one read of the PBF: the parent thread reads and inflates the
 * file once and decodes its nodes once, into one node index, and every importer thread consumes the same parts
 * (shared-read.ts), decoding the ways' and relations' tags it needs. So the file is read once however many
 * importers there are, and node positions are held once, not once per importer.
 *
 * After the read, each importer's build phase (the road graph's contraction, the render and places indexes) is
 * where its memory peaks, so it waits for admission: longest first (roads, render, places), at most `threads` at a
 * time, and only while the estimated peaks of the admitted ones and its own fit the memory budget (estimatedPeak;
 * the first always goes). At country scale the contraction alone takes about as long as places and render
 * together, so on two cores a full import takes about as long as its longest importer instead of the sum. The
 * first failure aborts the others (each importer renames its output in only when complete, so the data in service
 * stays in service) and is thrown as it is; summaries come back in the importers' order.
 */
export async function importInThreads(
  importers: Importer[],
  file: string,
  dataDir: string,
  progress: (importer: string, stage: string, done: number, total: number) => void,
  signal: AbortSignal,
  o: { memoryBytes: number; threads: number; pbfBytes: number },
): Promise<ImportSummary[]> {
  const threads = Math.max(1, Math.min(o.threads, importers.length));
  const results = new Map<string, ImportSummary>();
  const stop = new AbortController(); // the read and every thread
  let failure: Error | undefined;
  const fail = (err: Error) => {
    if (!failure) failure = err;
    stop.abort();
  };
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort);

  // Admission of build phases, in WEIGHT order: an importer waits for the ones before it to be admitted first.
  const order = [...importers].sort((a, b) => (WEIGHT[b.name] ?? 0) - (WEIGHT[a.name] ?? 0)).map((i) => i.name);
  const asking = new Map<string, () => void>();
  const building = new Set<string>();
  let committed = 0;
  const admit = () => {
    while (order.length) {
      const name = order[0]!,
        go = asking.get(name);
      const peak = estimatedPeak(name, o.pbfBytes);
      if (!go || building.size >= threads || (building.size && committed + peak > o.memoryBytes)) return;
      order.shift();
      asking.delete(name);
      building.add(name);
      committed += peak;
      go();
    }
  };

  const index = new NodeIndex({ budgetBytes: o.memoryBytes * NODE_INDEX_SHARE, spillDir: dataDir });
  let holding = importers.length; // threads that may still read the index
  let readEnded = false;
  const letGo = () => {
    if (--holding === 0 && readEnded) index.close();
  };
  const consumers: Array<ReadConsumer & { name: string }> = [];
  const read = { ack: (_c: ReadConsumer) => {} };
  const threadsDone = importers.map(
    (imp) =>
      new Promise<void>((resolve) => {
        const job: ThreadJob = { name: imp.name, file, dataDir, memoryBytes: Math.floor(o.memoryBytes / threads) };
        const worker = startModuleWorker(import.meta.url, 'import-thread', job);
        const me = {
          name: imp.name,
          taggedNodes: imp.name !== 'roads',
          gone: false,
          post: (m: unknown) => worker.postMessage(m),
        };
        consumers.push(me);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          letGo();
        };
        const abort = () => worker.postMessage('abort');
        stop.signal.addEventListener('abort', abort);
        const settle = (err?: Error) => {
          if (me.gone) return;
          me.gone = true;
          release();
          stop.signal.removeEventListener('abort', abort);
          if (building.delete(imp.name)) committed -= estimatedPeak(imp.name, o.pbfBytes);
          else order.splice(order.indexOf(imp.name), 1);
          asking.delete(imp.name);
          read.ack(me); // a reader waiting on it goes on
          admit();
          if (err) fail(err);
          resolve();
        };
        worker.on('message', (m: ThreadMessage | 'ack' | 'released') => {
          if (m === 'ack') read.ack(me);
          else if (m === 'released') release();
          else if (m.t === 'progress') progress(imp.name, m.stage, m.done, m.total);
          else if (m.t === 'admit') {
            asking.set(imp.name, () => worker.postMessage('admitted'));
            admit();
          } else if (m.t === 'done') {
            results.set(imp.name, m.summary);
            settle();
          } else settle(new Error(`${imp.name}: ${m.message}`)); // which importer, as the operator sees several run
        });
        worker.on('error', (e) => settle(e));
        worker.on('exit', (code) =>
          settle(results.has(imp.name) ? undefined : new Error(`${imp.name} import thread exited (${code})`)),
        );
      }),
  );
  const shared = shareRead(file, index, consumers, {
    backlogBytes: o.memoryBytes * BACKLOG_SHARE,
    onBytes: (done) => {
      for (const c of consumers) if (!c.gone) progress(c.name, 'read', done, o.pbfBytes);
    },
    signal: stop.signal,
  });
  read.ack = shared.ack;
  await shared.done.catch((e: Error) => fail(stop.signal.aborted ? e : new Error(`cannot read ${file}: ${e.message}`)));
  readEnded = true;
  if (holding === 0) index.close();
  try {
    await Promise.all(threadsDone);
  } finally {
    signal.removeEventListener('abort', onAbort);
    index.close();
  }
  if (failure) throw failure;
  if (signal.aborted) throw new Error('aborted');
  return importers.map((i) => results.get(i.name)!);
}
