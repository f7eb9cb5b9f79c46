/**
 * One importer in its own thread (see parallel.ts): runs it on the file, posts its progress (at most every
 * 100 ms, and at every stage change) and then its summary or its error message; 'abort' from the parent aborts it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { IMPORTERS } from './importers.js';
import type { ThreadJob, ThreadMessage } from './parallel.js';

const port = parentPort!;
const job = workerData as ThreadJob;
const abort = new AbortController();
port.on('message', (m) => {
  if (m === 'abort') abort.abort();
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
      const now = performance.now();
      if (stage === lastStage && now - lastAt < 100 && done < total) return;
      lastStage = stage;
      lastAt = now;
      post({ t: 'progress', stage, done, total });
    },
    abort.signal,
    { memoryBytes: job.memoryBytes },
  );
  post({ t: 'done', summary });
} catch (e) {
  post({ t: 'error', message: (e as Error)?.message ?? String(e) });
}
port.close();
