/**
 * A render thread: owns its own TileRenderer (fonts, Natural Earth and the render.db connection are per thread) and
 * answers {id, z, x, y, scale, format} with the encoded tile. Drawing is synchronous CPU work; keeping it here keeps
 * the server's event loop free for cache hits while tiles render. A render the pool abandoned before this thread
 * reached it (its id is in the shared cancel array) is answered `skipped` without drawing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RenderStore } from '../store/render/reader.js';
import { TileRenderer } from './tile-renderer.js';
import { lowerThreadPriority } from '../core/thread-priority.js';
import { GazetteerLabels } from '../places/labels.js';
import type { TileFormat } from '../tiles/types.js';
import { CANCEL_WORDS, type RenderThreadData } from './worker-pool.js';

interface Job {
  id: number;
  z: number;
  x: number;
  y: number;
  scale: number;
  format: TileFormat;
}

const { dataDir, cancelled, testDelayMs, nice } = workerData as RenderThreadData;
lowerThreadPriority(nice);
const renderer = new TileRenderer({
  store: RenderStore.inDataDir(dataDir),
  places: GazetteerLabels.inDataDir(dataDir),
});
/** Test hook: a synchronous wait stands in for a long draw (the thread takes no message meanwhile). */
const hold = testDelayMs ? new Int32Array(new SharedArrayBuffer(4)) : undefined;

parentPort!.on('message', (job: Job) => {
  if (Atomics.load(cancelled, job.id % CANCEL_WORDS) === job.id)
    return parentPort!.postMessage({ id: job.id, skipped: true });
  if (hold) Atomics.wait(hold, 0, 0, testDelayMs);
  renderer.renderTile(job.z, job.x, job.y, job.scale, job.format).then(
    (buf) => {
      const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
      parentPort!.postMessage({ id: job.id, bytes: ab }, [ab as ArrayBuffer]);
    },
    (e: Error) => parentPort!.postMessage({ id: job.id, error: e.message }),
  );
});
parentPort!.postMessage({ ready: true });
