/** A pool thread for the pinning test: each task answers the CPUs this thread may run on, and its slot. */
import { workerData } from 'node:worker_threads';
import { allowedCpus } from '../../src/core/thread-cpu.js';
import { serveTasks, type HostData } from '../../src/limits/worker-host.js';

serveTasks<true>(
  () => true,
  async () => {
    // held a moment, so a task sent meanwhile goes to the other thread
    await new Promise((r) => setTimeout(r, 100));
    return { slot: (workerData as HostData).slot, cpus: allowedCpus('/proc/thread-self') };
  },
);
