/**
 * The production logger: pino, writing one JSON object per line with the fields operators already parse (`ts` as
 * ISO 8601, `level` as a name, `msg`, then the caller's fields) to stderr through an asynchronous destination, so a
 * request never waits on a write. The `Logger` interface the rest of the code sees stays in core/log.ts; this module
 * is the only one that imports pino (an external library, so it lives in ops/ beside the other process concerns and
 * not in core/, which holds pure leaves).
 *
 * Credentials never reach a log line: fields named for a key, token or secret are replaced by `[redacted]` wherever
 * they appear at the top level or in a logged `headers`/`query` object, and on warnings and errors (messages that
 * quote URLs, such as an upstream tile origin's error) credential query parameters (`key=`, `t=`, `token=` ...) are
 * masked inside every string field.
 */
import { pino } from 'pino';
import type { Level, Logger } from '../core/log.js';

export interface AppLogger extends Logger {
  /** Resolves once the destination has written out what it held (call it before exiting). */
  flush(): Promise<void>;
}

const REDACTED = '[redacted]';

/** Field names whose values are credentials. */
const SECRET_FIELDS = [
  'key',
  'api_key',
  'apiKey',
  'token',
  'tileToken',
  't',
  'bearer',
  'authorization',
  'secret',
  'jwt_secret',
  'password',
];
const SECRET_HEADERS = ['authorization', 'x-api-key', 'cookie', 'proxy-authorization'];
const REDACT_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_HEADERS.map((h) => `headers["${h}"]`),
  ...SECRET_FIELDS.map((f) => `query["${f}"]`),
];

/** Credential query parameters inside a URL quoted by a message: an upstream's `?key=...`, a tile token `&t=...`. */
const SECRET_PARAM = /([?&;](?:key|api_key|apikey|access_token|token|t|sig|signature|secret|password)=)[^&#;\s"'<>]+/gi;

/** Masks credential query parameters in a string (URLs quoted in error messages). */
export const maskSecrets = (s: string): string => (s.includes('=') ? s.replace(SECRET_PARAM, `$1${REDACTED}`) : s);

function maskFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    out[k] = typeof v === 'string' ? maskSecrets(v) : v;
  }
  return out;
}

type Destination = ReturnType<typeof pino.destination>;

/**
 * pino's asynchronous destination, buffering up to 4 KiB (at most 250 ms) per write, the setting pino documents for
 * asynchronous logging: a write carries a dozen or more request lines instead of one system call per request. What
 * it holds when the process exits is written out synchronously (pino's exit hook); a SIGKILL loses at most that.
 */
const BATCH_BYTES = 4096;
const BATCH_MS = 250;

/** One destination per file descriptor and process, so lines from every logger on it stay in order. */
const destinations = new Map<number, Destination>();
function destination(fd: number): Destination {
  let d = destinations.get(fd);
  if (!d)
    destinations.set(fd, (d = pino.destination({ fd, sync: false, minLength: BATCH_BYTES, periodicFlush: BATCH_MS })));
  return d;
}

/**
 * A JSON-lines logger at `min` and above, writing to a file descriptor (stderr unless told otherwise) asynchronously;
 * pino also writes out what is still pending, synchronously, if the process exits. Given a function instead, it
 * hands every line to it at once (tests, and CLI callers that capture output).
 */
export function jsonLogger(min: Level = 'info', to: ((line: string) => void) | number = 2): AppLogger {
  const dest = typeof to === 'number' ? destination(to) : undefined;
  const p = pino(
    {
      level: min,
      base: null,
      messageKey: 'msg',
      timestamp: () => `,"ts":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    dest ?? { write: to as (line: string) => void },
  );
  // Info and debug lines (the per-request line among them) carry route patterns, ids and numbers only; warnings and
  // errors may quote URLs and get their strings masked, off the hot path.
  return {
    debug: (msg, f) => (f ? p.debug(f, msg) : p.debug(msg)),
    info: (msg, f) => (f ? p.info(f, msg) : p.info(msg)),
    warn: (msg, f) => (f ? p.warn(maskFields(f), maskSecrets(msg)) : p.warn(maskSecrets(msg))),
    error: (msg, f) => (f ? p.error(maskFields(f), maskSecrets(msg)) : p.error(maskSecrets(msg))),
    // With a buffering destination pino's flush waits until the buffer is written; a write error ends the wait too.
    flush: () => new Promise<void>((resolve) => p.flush(() => resolve())),
  };
}
