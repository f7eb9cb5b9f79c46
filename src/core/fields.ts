import { AppError } from './errors.js';
import { isLat, isLng } from './geo.js';

/** Field checks shared by every request parser; each failure is a VALIDATION_ERROR naming its field. */
type Obj = Record<string, unknown>;

export const invalid = (field: string, why: string): AppError =>
  new AppError('VALIDATION_ERROR', `${field}: ${why}`, { details: { field } });

/** A required coordinate: present, a finite number in range, and not exactly 0 (the spec rejects 0 as unset). */
export function requiredCoord(body: Obj, field: string, kind: 'lat' | 'lng'): number {
  const v = body[field];
  if (v === undefined || v === null) throw invalid(field, 'is required');
  if (typeof v !== 'number') throw invalid(field, 'must be a number');
  if (v === 0) throw invalid(field, 'must not be 0');
  if (!(kind === 'lat' ? isLat(v) : isLng(v)))
    throw invalid(field, kind === 'lat' ? 'must be within [-90, 90]' : 'must be within [-180, 180]');
  return v;
}

export function optionalBool(body: Obj, field: string): boolean {
  const v = body[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(field, 'must be a boolean');
  return v;
}
