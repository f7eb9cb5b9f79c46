import { sniffImageType } from '../../core/image-type.js';
import type { Scale } from '../warm-store.js';
import { OriginError, type TileOrigin } from './types.js';

export interface XyzOptions {
  /** URL template with {z}, {x}, {y}; optional {s} becomes "@2x"/"@3x" (empty at scale 1), {r} the same. */
  url: string;
  userAgent: string;
  timeoutMs: number;
  retries: number;
  concurrency: number;
  fetchImpl?: typeof fetch;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((res) => {
    const t = setTimeout(res, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), res()), { once: true });
  });

/**
 * An upstream XYZ server. At most `concurrency` requests in flight (an operator's courtesy to the upstream);
 * 5xx, 429 and network errors are retried with jittered exponential backoff; 404/204 mean "no such tile";
 * a body that is not an image is a failure (spec: 502), never served.
 */
export class XyzOrigin implements TileOrigin {
  readonly name = 'xyz';
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly o: XyzOptions) {
    if (!/\{z\}/.test(o.url) || !/\{x\}/.test(o.url) || !/\{y\}/.test(o.url))
      throw new Error('tiles.xyz_url needs {z}, {x} and {y}');
  }

  url(z: number, x: number, y: number, scale: Scale): string {
    const s = scale === 1 ? '' : `@${scale}x`;
    return this.o.url
      .replace('{z}', String(z))
      .replace('{x}', String(x))
      .replace('{y}', String(y))
      .replace(/\{[sr]\}/, s);
  }

  async fetch(z: number, x: number, y: number, scale: Scale, signal: AbortSignal): Promise<Buffer | undefined> {
    if (this.active >= this.o.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await this.attempts(this.url(z, x, y, scale), signal);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  private async attempts(url: string, outer: AbortSignal): Promise<Buffer | undefined> {
    let last: OriginError = new OriginError('failed', 'no attempt made');
    for (let attempt = 0; attempt <= this.o.retries; attempt++) {
      if (attempt > 0) await sleep(100 * 2 ** (attempt - 1) * (0.5 + Math.random()), outer);
      if (outer.aborted) throw new OriginError('timeout', `${url}: gave up`);
      const signal = AbortSignal.any([outer, AbortSignal.timeout(this.o.timeoutMs)]);
      try {
        const res = await (this.o.fetchImpl ?? fetch)(url, {
          headers: { 'User-Agent': this.o.userAgent, Accept: 'image/*' },
          signal,
        });
        if (res.status === 404 || res.status === 204) return undefined;
        if (res.status >= 500 || res.status === 429) {
          last = new OriginError('failed', `${url}: HTTP ${res.status}`);
          continue;
        }
        if (res.status !== 200) throw new OriginError('failed', `${url}: HTTP ${res.status}`);
        const body = Buffer.from(await res.arrayBuffer());
        if (!sniffImageType(body)) throw new OriginError('failed', `${url}: not an image`);
        return body;
      } catch (e) {
        if (e instanceof OriginError) throw e;
        const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
        last = new OriginError(timedOut ? 'timeout' : 'failed', `${url}: ${(e as Error).message}`);
      }
    }
    throw last;
  }
}
