import type { TestServer } from './app.js';
import type { TileOrigin } from '../../src/tiles/origins/types.js';
import { OriginError } from '../../src/tiles/origins/types.js';
import type { Scale } from '../../src/tiles/warm-store.js';

/** Mints a tile token for a fresh key on the server. */
export async function tileToken(s: TestServer): Promise<string> {
  const r = await s.post('/maps/v1/tile-token', '', { 'X-API-Key': s.key().key });
  const j = (await r.json()) as { data: { token: string } };
  return j.data.token;
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(b: Buffer): { w: number; h: number } {
  return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
}

export const bytesOf = async (r: Response): Promise<Buffer> => Buffer.from(await r.arrayBuffer());

/**
 * Wraps a real origin with a switch (ok / fail / slow / missing) and call counters, for failure-path tests. In 'slow'
 * mode a fetch is held until release() is called, or for `slowMs` at most.
 */
export class SwitchOrigin implements TileOrigin {
  readonly name = 'switch';
  mode: 'ok' | 'fail' | 'slow' | 'missing' = 'ok';
  calls = 0;
  /** Fetches that have returned or thrown. */
  answered = 0;
  private held: Array<() => void> = [];
  constructor(
    private readonly inner: TileOrigin,
    private readonly slowMs = 2000,
  ) {}

  /** Fetches held in 'slow' mode right now. */
  get holding(): number {
    return this.held.length;
  }

  /** Lets every held fetch go on. */
  release(): void {
    for (const go of [...this.held]) go();
  }

  async fetch(z: number, x: number, y: number, scale: Scale, signal: AbortSignal): Promise<Buffer | undefined> {
    this.calls++;
    try {
      if (this.mode === 'fail') throw new OriginError('failed', 'switched off');
      if (this.mode === 'missing') return undefined;
      if (this.mode === 'slow') await this.hold();
      return await this.inner.fetch(z, x, y, scale, signal);
    } finally {
      this.answered++;
    }
  }

  private hold(): Promise<void> {
    return new Promise((resolve) => {
      const go = () => {
        clearTimeout(timer);
        this.held = this.held.filter((g) => g !== go);
        resolve();
      };
      const timer = setTimeout(go, this.slowMs);
      timer.unref();
      this.held.push(go);
    });
  }
}
