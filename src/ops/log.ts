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
import { writeSync } from 'node:fs';
import { pino } from 'pino';
import type { AccessLine, Level, Logger } from '../core/log.js';

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

/**
 * The lines of one event-loop turn, handed to the destination as one string. sonic-boom (pino's destination) measures
 * the byte length of the string it is accumulating on every write, which flattens that string each time: a burst of
 * request lines made logging quadratic in the batch, measured at 10% of the HTTP thread at 44k requests/s. Joined
 * here once per turn, the destination sees one write per turn. What a turn holds is passed on at process exit
 * before the destination is written out synchronously, so nothing more is lost on a crash than before.
 */
class TurnBatch {
  private lines: string[] = [];
  private scheduled = false;

  constructor(
    private readonly fd: number,
    private readonly dest: Destination,
  ) {
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.pass);
    }
    return true;
  }

  private readonly pass = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const batch = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.dest.write(batch);
  };

  /** pino's logger.flush(cb) lands here. */
  flush(cb: (err?: Error) => void): void {
    this.pass();
    this.dest.flush(cb);
  }

  /**
   * At exit: what the destination holds, then this turn's lines, written synchronously. The turn's lines do not go
   * through the destination, which would start an asynchronous write that the exiting process never finishes.
   */
  flushSync(): void {
    this.dest.flushSync();
    if (this.lines.length === 0) return;
    const bytes = Buffer.from(this.lines.join(''));
    this.lines = [];
    writeAllSync(this.fd, bytes);
  }
}

/** Writes every byte, waiting out a full pipe (EAGAIN on a non-blocking descriptor) a millisecond at a time. */
function writeAllSync(fd: number, bytes: Buffer): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let at = 0, tries = 0; at < bytes.length;) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > 5000) throw e;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

/** One destination per file descriptor and process, so lines from every logger on it stay in order. */
const destinations = new Map<number, TurnBatch>();
function destination(fd: number): TurnBatch {
  let d = destinations.get(fd);
  if (!d)
    destinations.set(
      fd,
      (d = new TurnBatch(fd, pino.destination({ fd, sync: false, minLength: BATCH_BYTES, periodicFlush: BATCH_MS }))),
    );
  return d;
}

/** The `ts` field, formatted once per millisecond rather than once per line. */
let tsMs = 0;
let tsField = '';
function timestamp(): string {
  const now = Date.now();
  if (now !== tsMs) {
    tsMs = now;
    tsField = `,"ts":"${new Date(now).toISOString()}"`;
  }
  return tsField;
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
      timestamp,
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
    access: p.isLevelEnabled('info') ? accessWriter(dest ?? { write: to as (line: string) => void }) : () => {},
    // With a buffering destination pino's flush waits until the buffer is written; a write error ends the wait too.
    flush: () => new Promise<void>((resolve) => p.flush(() => resolve())),
  };
}

const q = JSON.stringify;

/**
 * The access line written as pino writes an info line (same fields, same order, undefined fields left out), built
 * directly: pino's generic serialisation and redaction cost a quarter of a hot tile's time in the HTTP thread, and
 * these fields are route patterns, ids and numbers that hold no credential.
 */
function accessWriter(dest: { write(line: string): unknown }): (line: AccessLine) => void {
  return (a) => {
    let s = `{"level":"info"${timestamp()},"request_id":${q(a.request_id)},"method":${q(a.method)},"route":${q(a.route)},"status":${a.status}`;
    if (a.key_id !== undefined) s += `,"key_id":${q(a.key_id)}`;
    s += `,"duration_ms":${a.duration_ms}`;
    if (a.source !== undefined) s += `,"source":${q(a.source)}`;
    dest.write(s + ',"msg":"request"}\n');
  };
}
