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

/** Wraps a real origin with a switch (ok / fail / slow / missing) and a call counter, for failure-path tests. */
export class SwitchOrigin implements TileOrigin {
  readonly name = 'switch';
  mode: 'ok' | 'fail' | 'slow' | 'missing' = 'ok';
  calls = 0;
  constructor(
    private readonly inner: TileOrigin,
    private readonly slowMs = 2000,
  ) {}

  async fetch(z: number, x: number, y: number, scale: Scale, signal: AbortSignal): Promise<Buffer | undefined> {
    this.calls++;
    if (this.mode === 'fail') throw new OriginError('failed', 'switched off');
    if (this.mode === 'missing') return undefined;
    if (this.mode === 'slow') await new Promise((r) => setTimeout(r, this.slowMs));
    return this.inner.fetch(z, x, y, scale, signal);
  }
}
