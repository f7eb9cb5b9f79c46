import { AppError, isAppError, type ErrorCode } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Pool } from '../limits/pool.js';

export type Capability = 'AUTOCOMPLETE' | 'GEOCODE' | 'REVERSE' | 'PLACE';

/**
 * Runs one capability's work: refused with *_DISABLED when switched off, shed with *_BACKPRESSURE when its pool is
 * full, and any unclassified failure becomes *_FAILED (502) with the cause logged, never shown.
 */
export async function guarded<T>(
  cap: Capability,
  enabled: boolean,
  pool: Pool,
  log: Logger,
  work: () => Promise<T>,
): Promise<T> {
  if (!enabled) throw new AppError(`${cap}_DISABLED` as ErrorCode);
  try {
    return await pool.run(work);
  } catch (e) {
    if (isAppError(e)) throw e;
    log.error(`${cap.toLowerCase()} failed`, { error: (e as Error)?.stack ?? String(e) });
    throw new AppError(`${cap}_FAILED` as ErrorCode);
  }
}
