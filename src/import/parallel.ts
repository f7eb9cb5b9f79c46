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
 * Runs importers side by side, one thread each, at most `threads` at a time. At country scale the road graph's
 * contraction alone takes about as long as places and render together, so on two cores a full import takes about
 * as long as its longest importer instead of the sum. Each running thread gets an equal share of the memory
 * budget. The first failure aborts the others (each importer renames its output in only when complete, so the data
 * in service stays in service) and is thrown as it is; summaries come back in the importers' order.
 */
export async function importInThreads(
  importers: Importer[],
  file: string,
  dataDir: string,
  progress: (importer: string, stage: string, done: number, total: number) => void,
  signal: AbortSignal,
  o: { memoryBytes: number; threads: number },
): Promise<ImportSummary[]> {
  const threads = Math.max(1, Math.min(o.threads, importers.length));
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
      const job: ThreadJob = { name: imp.name, file, dataDir, memoryBytes: Math.floor(o.memoryBytes / threads) };
      const worker = startModuleWorker(import.meta.url, 'import-thread', job);
      const handle = { abort: () => worker.postMessage('abort') };
      running.add(handle);
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        running.delete(handle);
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
  const lanes = Array.from({ length: threads }, async () => {
    for (let imp = queue.shift(); imp && !failure && !signal.aborted; imp = queue.shift()) await runOne(imp);
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
