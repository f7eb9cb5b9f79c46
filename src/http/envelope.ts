import { AppError, ERRORS, GENERIC_5XX_MESSAGE } from '../core/errors.js';
import { stringify } from '../core/serialised.js';
import type { HttpReply } from './types.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export function jsonReply(status: number, body: unknown, headers?: Record<string, string>): HttpReply {
  return { status, headers: withType(headers), body: JSON.stringify(body) };
}

function withType(headers: Record<string, string> | undefined): Record<string, string> {
  const h: Record<string, string> = { 'Content-Type': JSON_TYPE };
  if (headers) for (const k in headers) h[k] = headers[k]!;
  return h;
}

/**
 * The success envelope every JSON endpoint answers with: `{"status":"success","data":...,"message":"OK"}`, its
 * constant parts written once rather than serialised on every answer (the same bytes JSON.stringify would give).
 */
export function ok(data: unknown, headers?: Record<string, string>): HttpReply {
  const body = stringify(data, '{"status":"success","data":', ',"message":"OK"}');
  if (body === undefined) return jsonReply(200, { status: 'success', data, message: 'OK' }, headers);
  return { status: 200, headers: withType(headers), body };
}

export const bare = (status: number, headers: Record<string, string> = {}): HttpReply => ({ status, headers });

function retryHeaders(e: AppError): Record<string, string> {
  return e.retryAfter !== undefined ? { 'Retry-After': String(Math.max(1, Math.ceil(e.retryAfter))) } : {};
}

/**
 * The error envelope, with the spec's two deviations (REQUEST_TIMEOUT has no top-level message; SESSION_SUPERSEDED
 * is flat) and sanitised 5xx bodies that carry only a generic message and the request id.
 */
export function errorReply(e: AppError, requestId: string): HttpReply {
  const status = ERRORS[e.code].status;
  const headers = retryHeaders(e);
  if (e.code === 'SESSION_SUPERSEDED')
    return jsonReply(status, { status: 'error', code: e.code, message: e.message }, headers);
  const server = status >= 500;
  const message = server ? GENERIC_5XX_MESSAGE : e.message;
  const details = server ? { ...(e.details ?? {}), request_id: requestId } : e.details;
  const error = details ? { code: e.code, message, details } : { code: e.code, message };
  const body = e.code === 'REQUEST_TIMEOUT' ? { status: 'error', error } : { status: 'error', error, message };
  return jsonReply(status, body, headers);
}

/** Binary endpoints answer their parameter and upstream errors as a bare status (keeping Retry-After). */
export const bareErrorReply = (e: AppError): HttpReply => bare(ERRORS[e.code].status, retryHeaders(e));
