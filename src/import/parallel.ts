import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { startModuleWorker } from '../core/module-worker.js';
import type { ReadJob, ReadMessage } from './shared-read.js';
import type { Importer, ImportSummary } from './types.js';

/**
 * Share of the `--memory` budget the shared read's node index keeps resident (the rest of it spills): as much as
 * roads kept of it reading alone. More lingers after the read (its shared memory goes only when the threads that
 * held it next collect garbage) and adds to the contraction's peak: with a quarter, the 1,200-copy country peaked
 * at 4.0 GiB, all of it in the contraction.
 */
const NODE_INDEX_SHARE = 1 / 16;
/** Share of the budget that parts of the read some importers have not consumed yet may hold (shared-read.ts). */
const BACKLOG_SHARE = 0.125;

/** What an import thread is started with. */
export interface ThreadJob {
  name: string;
  file: string;
  dataDir: string;
  memoryBytes: number;
  /** Where the read thread posts the parts of the file (shared-read.ts). */
  port: MessagePort;
  /**
   * Set to 1 to abort: an Int32 the thread reads at each progress report, so a long synchronous stage (the
   * contraction) stops within a report or two, where an 'abort' message would wait for it to end.
   */
  cancel: SharedArrayBuffer;
}

/** Importer thread -> parent (its acknowledgements of parts go to the read thread, on its port). */
export type ThreadMessage =
  | { t: 'progress'; stage: string; done: number; total: number }
  | { t: 'admit' }
  | { t: 'done'; summary: ImportSummary }
  | { t: 'error'; message: string };

/** Longest first, so the last to finish is admitted first (measured at country scale: roads, render, places). */
const WEIGHT: Record<string, number> = { roads: 3, render: 2, places: 1 };

/**
 * Peak memory of each importer per byte of PBF, as measured on the 600-copy synthetic country (278 MB): roads alone
 * 2.2 GB (its contraction), rounded up; render and places 1.3 and 1.0 GB each with its own node index, less the
 * 1.7 bytes a PBF byte that index held (one index of the shared read serves them all), rounded up. The `--memory`
 * budget bounds the node index and way geometries that spill to disk; the contraction's edge arrays, the places
 * database build and the render features grow with the extract regardless. Side by side, the importers' peaks add
 * up, so importers share a read only while their estimates fit the budget together.
 */
const PEAK_PER_PBF_BYTE: Record<string, number> = { roads: 8.5, render: 3.5, places: 2.5 };

/** The estimated peak of an importer over a file of `pbfBytes` (unknown importers: as much as roads). */
export const estimatedPeak = (name: string, pbfBytes: number): number =>
  Math.ceil((PEAK_PER_PBF_BYTE[name] ?? PEAK_PER_PBF_BYTE.roads!) * pbfBytes);

/**
 * Runs importers side by side, one thread each, on as few reads of the PBF as the memory budget allows: longest
 * first (roads, render, places), each joins the read of the ones before it while their estimated peaks fit the
 * budget together (estimatedPeak; the first always goes), else starts the next read once they are done. With the
 * default 4 GiB the 600-copy country (278 MB) is read once for all three; the 1,200-copy one (556 MB) twice: roads
 * alone, then render beside places.
 *
 * In a read, a thread of its own (read-thread.ts) reads and inflates the file once and decodes its nodes once, into
 * one node index, and every importer thread consumes the same parts (shared-read.ts), decoding the ways' and
 * relations' tags it needs. After its read, each importer's build phase (the road graph's contraction, the render
 * and places indexes) waits for a free thread: longest first, at most `threads` at a time. At country scale the contraction alone
 * takes about as long as places and render together, so on two cores a full import takes about as long as its
 * longest importer instead of the sum. The first failure aborts the others (each importer renames its output in
 * only when complete, so the data in service stays in service) and is thrown as it is; summaries come back in the
 * importers' order.
 */
export async function importInThreads(
  importers: Importer[],
  file: string,
  dataDir: string,
  progress: Progress,
  signal: AbortSignal,
  o: Options,
): Promise<ImportSummary[]> {
  const reads: Importer[][] = [];
  let planned = Infinity; // estimated peaks of the last read's importers
  for (const imp of [...importers].sort((a, b) => (WEIGHT[b.name] ?? 0) - (WEIGHT[a.name] ?? 0))) {
    const peak = estimatedPeak(imp.name, o.pbfBytes);
    if (planned + peak <= o.memoryBytes) {
      reads[reads.length - 1]!.push(imp);
      planned += peak;
    } else {
      reads.push([imp]);
      planned = peak;
    }
  }
  const results = new Map<string, ImportSummary>();
  for (const group of reads) {
    for (const s of await oneRead(group, file, dataDir, progress, signal, o)) results.set(s.importer, s);
  }
  return importers.map((i) => results.get(i.name)!);
}

type Progress = (importer: string, stage: string, done: number, total: number) => void;
interface Options {
  memoryBytes: number;
  threads: number;
  pbfBytes: number;
}

/** Importers side by side on one read of the file (see importInThreads); their summaries, in no order. */
async function oneRead(
  importers: Importer[],
  file: string,
  dataDir: string,
  progress: Progress,
  signal: AbortSignal,
  o: Options,
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

  const admission = new BuildAdmission(
    importers.map((i) => i.name),
    threads,
  );

  // one port between the read thread and each importer thread, for the parts and their acknowledgements
  const channels = importers.map(() => new MessageChannel());
  const running = new Set<string>(importers.map((i) => i.name));
  const threadsDone = importers.map(
    (imp, k) =>
      new Promise<void>((resolve) => {
        const port = channels[k]!.port2;
        const job: ThreadJob = {
          name: imp.name,
          file,
          dataDir,
          memoryBytes: Math.floor(o.memoryBytes / threads),
          port,
          cancel: new SharedArrayBuffer(4),
        };
        const worker = startModuleWorker(import.meta.url, 'import-thread', job, [port]);
        const abort = () => {
          Atomics.store(new Int32Array(job.cancel), 0, 1);
          worker.postMessage('abort');
        };
        stop.signal.addEventListener('abort', abort);
        let settled = false;
        const settle = (err?: Error) => {
          if (settled) return;
          settled = true;
          running.delete(imp.name);
          stop.signal.removeEventListener('abort', abort);
          admission.done(imp.name);
          if (err) fail(err);
          resolve();
        };
        worker.on('message', (m: ThreadMessage) => {
          if (m.t === 'progress') progress(imp.name, m.stage, m.done, m.total);
          else if (m.t === 'admit') {
            // nothing starts building once the import is stopping
            if (!stop.signal.aborted) admission.ask(imp.name, () => worker.postMessage('admitted'));
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
  const readDone = new Promise<void>((resolve) => {
    const job: ReadJob = {
      file,
      dataDir,
      nodeBudgetBytes: o.memoryBytes * NODE_INDEX_SHARE,
      backlogBytes: o.memoryBytes * BACKLOG_SHARE,
      consumers: importers.map((imp, k) => ({
        name: imp.name,
        taggedNodes: imp.name !== 'roads',
        port: channels[k]!.port1,
      })),
    };
    const reader = startModuleWorker(
      import.meta.url,
      'read-thread',
      job,
      job.consumers.map((c) => c.port),
    );
    const abort = () => reader.postMessage('abort');
    stop.signal.addEventListener('abort', abort);
    let ended = false;
    reader.on('message', (m: ReadMessage) => {
      if (m.t === 'bytes') {
        for (const name of running) progress(name, 'read', m.done, o.pbfBytes);
      } else if (m.t === 'end') ended = true;
      else if (!stop.signal.aborted) fail(new Error(`cannot read ${file}: ${m.message}`));
    });
    reader.on('error', (e) => fail(e));
    reader.on('exit', (code) => {
      stop.signal.removeEventListener('abort', abort);
      if (!ended && !stop.signal.aborted) fail(new Error(`the read thread exited (${code})`));
      resolve();
    });
  });
  try {
    await Promise.all([readDone, ...threadsDone]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure;
  if (signal.aborted) throw new Error('aborted');
  return [...results.values()];
}

/**
 * Build phases, admitted longest first (WEIGHT): an importer waits for the ones before it in that order to be
 * admitted, then for a free thread (`threads` build at a time).
 */
class BuildAdmission {
  private readonly order: string[];
  private readonly asking = new Map<string, () => void>();
  private readonly building = new Set<string>();
  constructor(
    names: string[],
    private readonly threads: number,
  ) {
    this.order = [...names].sort((a, b) => (WEIGHT[b] ?? 0) - (WEIGHT[a] ?? 0));
  }
  /** `name` is ready to build; `go` is called when it may. */
  ask(name: string, go: () => void): void {
    this.asking.set(name, go);
    this.pump();
  }
  /** `name` finished or failed, admitted or not. */
  done(name: string): void {
    if (!this.building.delete(name) && this.order.includes(name)) this.order.splice(this.order.indexOf(name), 1);
    this.asking.delete(name);
    this.pump();
  }
  private pump(): void {
    while (this.order.length && this.building.size < this.threads) {
      const name = this.order[0]!,
        go = this.asking.get(name);
      if (!go) return;
      this.order.shift();
      this.asking.delete(name);
      this.building.add(name);
      go();
    }
  }
}
