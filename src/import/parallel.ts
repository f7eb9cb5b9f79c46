import { startModuleWorker } from '../core/module-worker.js';
import type { Importer, ImportSummary } from './types.js';

/** What an import thread is started with. */
export interface ThreadJob {
  name: string;
  file: string;
  dataDir: string;
  memoryBytes: number;
}

export type ThreadMessage =
  | { t: 'progress'; stage: string; done: number; total: number }
  | { t: 'done'; summary: ImportSummary }
  | { t: 'error'; message: string };

/** Longest first, so the last thread to finish starts first (measured at country scale: roads, render, places). */
const WEIGHT: Record<string, number> = { roads: 3, render: 2, places: 1 };

/**
 * Peak memory of each importer per byte of PBF, measured alone on the 600-copy synthetic country (278 MB: roads
 * 2.2 GB, render 1.3 GB, places 1.0 GB), rounded up. The `--memory` budget bounds the node index and way
 * geometries that spill to disk; the contraction's edge arrays, the places database build and the render features
 * grow with the extract regardless. Side by side, the importers' peaks add up (7.1 GB for the 1,200-copy country),
 * so a thread starts only when its estimate fits beside the running ones.
 */
const PEAK_PER_PBF_BYTE: Record<string, number> = { roads: 8.5, render: 5, places: 4 };

/** The estimated peak of an importer over a file of `pbfBytes` (unknown importers: as much as roads). */
export const estimatedPeak = (name: string, pbfBytes: number): number =>
  Math.ceil((PEAK_PER_PBF_BYTE[name] ?? PEAK_PER_PBF_BYTE.roads!) * pbfBytes);

/**
 * Runs importers side by side, one thread each, at most `threads` at a time. At country scale the road graph's
 * contraction alone takes about as long as places and render together, so on two cores a full import takes about
 * as long as its longest importer instead of the sum. A thread starts only while the estimated peaks of the running
 * ones and its own fit in the memory budget (estimatedPeak; the first always starts), so a large country runs its
 * stages one or two at a time instead of all at once. Each running thread gets an equal share of the budget for
 * its node index and way geometries. The first failure aborts the others (each importer renames its output in only
 * when complete, so the data in service stays in service) and is thrown as it is; summaries come back in the
 * importers' order.
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
  let committed = 0; // estimated peak bytes of the running threads
  const waiting: Array<() => void> = []; // lanes waiting for memory to free
  const queue = [...importers].sort((a, b) => (WEIGHT[b.name] ?? 0) - (WEIGHT[a.name] ?? 0));
  const results = new Map<string, ImportSummary>();
  const running = new Set<{ abort(): void }>();
  let failure: Error | undefined;
  const stopAll = () => {
    for (const r of running) r.abort();
  };
  signal.addEventListener('abort', stopAll);
  const runOne = (imp: Importer) =>
    new Promise<void>((resolve) => {
      const peak = estimatedPeak(imp.name, o.pbfBytes);
      committed += peak;
      const job: ThreadJob = { name: imp.name, file, dataDir, memoryBytes: Math.floor(o.memoryBytes / threads) };
      const worker = startModuleWorker(import.meta.url, 'import-thread', job);
      const handle = { abort: () => worker.postMessage('abort') };
      running.add(handle);
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        running.delete(handle);
        committed -= peak;
        for (const w of waiting.splice(0)) w();
        if (err && !failure) {
          failure = err;
          stopAll();
        }
        resolve();
      };
      worker.on('message', (m: ThreadMessage) => {
        if (m.t === 'progress') progress(imp.name, m.stage, m.done, m.total);
        else if (m.t === 'done') {
          results.set(imp.name, m.summary);
          settle();
        } else settle(new Error(`${imp.name}: ${m.message}`)); // which importer, as the operator sees several run
      });
      worker.on('error', (e) => settle(e));
      worker.on('exit', (code) =>
        settle(results.has(imp.name) ? undefined : new Error(`${imp.name} import thread exited (${code})`)),
      );
      if (signal.aborted) handle.abort();
    });
  // The next importer that fits beside the running ones (longest first); the first always runs.
  const next = (): Importer | undefined => {
    const i = queue.findIndex((imp) => !committed || committed + estimatedPeak(imp.name, o.pbfBytes) <= o.memoryBytes);
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  };
  const lanes = Array.from({ length: threads }, async () => {
    while (queue.length && !failure && !signal.aborted) {
      const imp = next();
      if (imp) await runOne(imp);
      else await new Promise<void>((r) => waiting.push(r)); // a running thread finishes, then look again
    }
  });
  try {
    await Promise.all(lanes);
  } finally {
    signal.removeEventListener('abort', stopAll);
  }
  if (failure) throw failure;
  if (signal.aborted) throw new Error('aborted');
  return importers.map((i) => results.get(i.name)!);
}
