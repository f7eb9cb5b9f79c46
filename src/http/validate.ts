import type { HttpRequest } from './types.js';
import { invalid } from '../core/fields.js';

type Obj = Record<string, unknown>;

/** Parses a JSON object body; anything else is a VALIDATION_ERROR that names `body`. */
export function jsonBody(req: HttpRequest): Obj {
  const text = req.body?.toString('utf8') ?? '';
  if (!text.trim()) throw invalid('body', 'a JSON object is required');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw invalid('body', 'not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw invalid('body', 'must be a JSON object');
  }
  return v as Obj;
}

/** Query number: undefined when absent or empty, NaN when present but not numeric. */
export function queryNumber(req: HttpRequest, name: string): number | undefined {
  const raw = req.query.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
}

/** `locale` query value, else Accept-Language (anything starting with `ar` gives ar), else en. */
export function pickLocale(req: HttpRequest, explicit?: unknown): 'en' | 'ar' {
  if (explicit === 'ar' || explicit === 'en') return explicit;
  const q = req.query.get('locale');
  if (q === 'ar' || q === 'en') return q;
  return (req.headers['accept-language'] ?? '').trim().toLowerCase().startsWith('ar') ? 'ar' : 'en';
}
