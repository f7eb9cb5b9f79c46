/**
 * The read of a PBF shared by importer threads (parallel.ts), in a thread of its own: it reads, inflates and decodes
 * the nodes into the node index, and posts the parts to each importer thread over a MessagePort of its own
 * (shared-read.ts); the parent only hears how many bytes were read, so its event loop stays free for progress and
 * signals. When the read has ended and every importer is done with the node index (or gone), the thread closes its
 * ports and ends, and the index's memory and spill file go with it.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { NodeIndex } from './node-index.js';
import { shareRead, type ReadConsumer } from './shared-read.js';

export interface ReadJob {
  file: string;
  dataDir: string;
  nodeBudgetBytes: number;
  backlogBytes: number;
  consumers: Array<{ name: string; taggedNodes: boolean; port: MessagePort }>;
}

/** Read thread -> parent: bytes read so far, the end of the read (every part posted), or why it failed. */
export type ReadMessage = { t: 'bytes'; done: number } | { t: 'end' } | { t: 'error'; message: string };

const job = workerData as ReadJob;
const parent = parentPort!;
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
  parent.close(); // nothing left to keep the thread: it ends
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
