import { Worker } from 'node:worker_threads';
import type { TileFormat } from '../tiles/types.js';

interface Pending {
  resolve(b: Buffer): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  busy: Map<number, Pending>;
}

/**
 * Render threads for the built-in renderer. Jobs go to the thread with the fewest in flight; a thread that dies
 * fails its jobs (the serving path then answers a stand-in or 502) and is replaced. Under tsx (development and
 * tests) the TypeScript worker is bootstrapped through tsx's loader; the built package runs the compiled .js.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;

  /** Threads start on the first render, so an app that never renders a tile never pays for them. */
  constructor(
    readonly size: number,
    private readonly dataDir: string,
  ) {}

  private spawn(): Slot {
    const here = import.meta.url;
    const worker = here.endsWith('.ts')
      ? new Worker(
          `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(new URL('./render-worker.ts', here).href)}); })`,
          { eval: true, workerData: { dataDir: this.dataDir } },
        )
      : new Worker(new URL('./render-worker.js', here), { workerData: { dataDir: this.dataDir } });
    worker.unref(); // an idle render thread never keeps the process alive
    const slot: Slot = { worker, busy: new Map() };
    worker.on('message', (m: { id?: number; bytes?: ArrayBuffer; error?: string }) => {
      if (m.id === undefined) return;
      const p = slot.busy.get(m.id);
      slot.busy.delete(m.id);
      if (!p) return;
      if (m.bytes) p.resolve(Buffer.from(m.bytes));
      else p.reject(new Error(m.error ?? 'render thread failed'));
    });
    const fail = (e: Error) => {
      for (const p of slot.busy.values()) p.reject(e);
      slot.busy.clear();
      const i = this.slots.indexOf(slot);
      if (i >= 0 && !this.closed) this.slots[i] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => code !== 0 && fail(new Error(`render thread exited with code ${code}`)));
    return slot;
  }

  render(z: number, x: number, y: number, scale: number, format: TileFormat): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('render pool closed'));
    while (this.slots.length < this.size) this.slots.push(this.spawn());
    const slot = this.slots.reduce((a, b) => (b.busy.size < a.busy.size ? b : a));
    const id = this.nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      slot.busy.set(id, { resolve, reject });
      slot.worker.postMessage({ id, z, x, y, scale, format });
    });
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots) void s.worker.terminate();
  }
}
