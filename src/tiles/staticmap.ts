import { AppError } from '../core/errors.js';
import { isLat, isLng, type LatLng } from '../core/geo.js';
import { isAdmissionRefused, type Admission } from '../limits/admission.js';

export const STATIC_DEFAULT_W = 600;
export const STATIC_DEFAULT_H = 260;
const STATIC_MAX = 1024;

/** `lat,lng,lat,lng,...`; non-numeric or out-of-range pairs are skipped; fewer than 2 points is a (bare) 400. */
export function parseStaticPath(raw: string | null): LatLng[] {
  if (!raw || raw.includes(';')) throw new AppError('VALIDATION_ERROR', 'path: lat,lng pairs separated by commas');
  const parts = raw.split(',').map((s) => s.trim());
  const points: LatLng[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const lat = /^[+-]?\d+(\.\d+)?$/.test(parts[i]!) ? Number(parts[i]) : NaN;
    const lng = /^[+-]?\d+(\.\d+)?$/.test(parts[i + 1]!) ? Number(parts[i + 1]) : NaN;
    if (isLat(lat) && isLng(lng) && !(lat === 0 && lng === 0)) points.push({ lat, lng });
  }
  if (points.length < 2) throw new AppError('VALIDATION_ERROR', 'path: at least 2 valid points');
  return points;
}

/** w/h: absent, non-numeric or <= 0 use the default; larger than 1024 is capped. */
export function clampSize(raw: string | null, fallback: number): number {
  const n = raw !== null && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n <= 0) return fallback;
  return Math.min(n, STATIC_MAX);
}

export interface StaticMapRenderer {
  /** `signal` fires when nobody waits for the map any more: work not started yet is dropped. */
  render(path: LatLng[], w: number, h: number, signal?: AbortSignal): Promise<Buffer>;
  /** The refusal a map asked for now would meet at admission, if any (renderers with admission control). */
  refusalNow?(): AppError | undefined;
  /** Stops the threads it drew with, if any. */
  close?(): void;
}

/**
 * Admission control for whole static maps: `concurrency` render at once, a bounded few wait (at most their wait
 * budget, and never when predicted to wait longer), the rest are refused at once with a bare 503 and a Retry-After
 * that says when the maps ahead of them should be drawn.
 * A waiting map whose client went away is dropped unrendered. Inside, its basemap tiles are batch work.
 */
export class AdmittedStaticMaps implements StaticMapRenderer {
  /** Maps that started rendering (tests use it to prove a dropped map is never drawn). */
  started = 0;

  constructor(
    private readonly inner: StaticMapRenderer,
    readonly admission: Admission,
  ) {}

  /** The refusal a map asked for now would get (admission's queue full or its predicted wait too long). */
  refusalNow(): AppError | undefined {
    const r = this.admission.wouldRefuse('batch');
    if (!r) return undefined;
    this.admission.countRefusal('batch', r.reason);
    return new AppError('RENDER_BACKPRESSURE', `${this.admission.name}: ${r.reason} (refused on arrival)`, {
      retryAfter: r.retryAfterS,
    });
  }

  async render(path: LatLng[], w: number, h: number, signal?: AbortSignal): Promise<Buffer> {
    try {
      return await this.admission.run(
        'batch',
        () => {
          this.started++;
          return this.inner.render(path, w, h, signal);
        },
        { signal },
      );
    } catch (e) {
      if (isAdmissionRefused(e)) throw new AppError('RENDER_BACKPRESSURE', e.message, { retryAfter: e.retryAfterS });
      throw e;
    }
  }

  close(): void {
    this.inner.close?.();
  }
}

/** Until a basemap origin exists there is nothing to draw on: the spec's "render failed" (bare 502). */
export const noStaticMaps: StaticMapRenderer = {
  async render() {
    throw new AppError('RENDER_FAILED', 'no basemap origin is configured');
  },
};
