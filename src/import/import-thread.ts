/**
 * One importer in its own thread (see parallel.ts): runs it on the read thread's parts of the file (shared-read.ts,
 * on the port it is given), posts its progress (at most every 100 ms, and at every stage change) and then its
 * summary or its error message. Its build phase waits for the parent's admission ('admit' -> 'admitted'); 'abort'
 * from the parent, or its cancel word, aborts it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { IMPORTERS } from './importers.js';
import type { ThreadJob, ThreadMessage } from './parallel.js';
import { remoteFeed } from './shared-read.js';

const port = parentPort!;
const job = workerData as ThreadJob;
const abort = new AbortController();
const cancelled = new Int32Array(job.cancel);
const feed = remoteFeed(job.port, abort.signal, () => Atomics.load(cancelled, 0) === 1);
let admitted: (() => void) | undefined;
port.on('message', (m: 'abort' | 'admitted') => {
  if (m === 'abort') abort.abort();
  else admitted?.();
});
const post = (m: ThreadMessage) => port.postMessage(m);
let lastStage = '',
  lastAt = 0;
try {
  const imp = IMPORTERS.find((i) => i.name === job.name);
  if (!imp) throw new Error(`no importer named ${job.name}`);
  const summary = await imp.run(
    job.file,
    job.dataDir,
    (stage, done, total) => {
      if (Atomics.load(cancelled, 0)) throw new Error('aborted'); // from inside a synchronous stage too
      const now = performance.now();
      if (stage === lastStage && now - lastAt < 100 && done < total) return;
      lastStage = stage;
      lastAt = now;
      post({ t: 'progress', stage, done, total });
    },
    abort.signal,
    {
      memoryBytes: job.memoryBytes,
      feed,
      admit: () =>
        new Promise<void>((resolve, reject) => {
          if (abort.signal.aborted) return reject(new Error('aborted'));
          admitted = resolve;
          abort.signal.addEventListener('abort', () => reject(new Error('aborted')));
          post({ t: 'admit' });
        }),
    },
  );
  post({ t: 'done', summary });
} catch (e) {
  post({ t: 'error', message: (e as Error)?.message ?? String(e) });
}
port.close();
job.port.close();
