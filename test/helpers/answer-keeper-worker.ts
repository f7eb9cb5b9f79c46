/**
 * A pool thread for the worker-host test: each task answers a fresh 64 KB buffer and keeps it; the next task's
 * answer says how many bytes the kept one still has (0 once it was detached, i.e. moved to the pool's thread).
 */
import { serveTasks } from '../../src/limits/worker-host.js';

let kept: Uint8Array | undefined;
serveTasks<true>(
  () => true,
  () => {
    const keptBytes = kept?.byteLength ?? -1;
    kept = new Uint8Array(new ArrayBuffer(64 * 1024)).fill(7);
    return { keptBytes, bytes: kept };
  },
);
