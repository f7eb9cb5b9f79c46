/**
 * The read of a PBF shared by importer threads (parallel.ts), in a thread of its own: it reads, inflates and decodes
 * the nodes into the node index, and posts the parts to each importer thread over a MessagePort of its own
 * (shared-read.ts); the parent only hears how many bytes were read, so its event loop stays free for progress and
 * signals. When the read has ended and every importer is done with the node index (or gone), the thread closes its
 * ports and ends, and the index's memory and spill file go with it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readForThreads, type ReadJob } from './shared-read.js';

readForThreads(workerData as ReadJob, parentPort!);
