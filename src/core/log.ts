/**
 * The logging interface the code logs through: structured JSON lines, one object per line, so operators can grep and
 * ship logs as they are. The implementation that writes them (pino, asynchronously, with credentials redacted) is
 * src/ops/log.ts; this leaf holds only the interface and the logger that drops everything.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /**
   * The per-request access line, an info line with the message `request`. A logger may write it faster than info()
   * would (its fields are known and hold no credential); without this method it goes through info().
   */
  access?(line: AccessLine): void;
}

/** The access line's fields, in the order they are written. */
export interface AccessLine {
  request_id: string;
  method: string;
  /** The route's pattern, or the path (at most 200 characters) when no route matched. */
  route: string;
  status: number;
  key_id?: string;
  duration_ms: number;
  /** The answering tier: X-Tile-Source on the tile family, hit or miss on JSON answers that count misses. */
  source?: string;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A log call's message and fields as one line of text, for the loggers below that write plain text. */
const oneLine = (msg: string, fields?: Record<string, unknown>): string =>
  fields ? `${msg} ${JSON.stringify(fields)}` : msg;

/**
 * The logger of components built without one (a caller that passes none): warnings and errors still leave a trace,
 * as Node process warnings on stderr; debug and info lines are dropped.
 */
export const processWarnings: Logger = {
  debug() {},
  info() {},
  warn: (msg, fields) => process.emitWarning(oneLine(msg, fields), 'SvcmapsWarning'),
  error: (msg, fields) => process.emitWarning(oneLine(msg, fields), 'SvcmapsError'),
};

/**
 * A log line for a fault that can repeat at request rate (a shared store down, a script failing on every call): the
 * first one is written, then at most one every `everyMs`, carrying in `repeated` how many were not written since.
 * Callers count every occurrence themselves (a metric); this only keeps the log readable.
 */
export function repeatingLog(
  log: Logger,
  level: Level,
  msg: string,
  everyMs = 10_000,
  now: () => number = () => performance.now(),
): (fields?: Record<string, unknown>) => void {
  let last = -Infinity;
  let skipped = 0;
  return (fields = {}) => {
    const t = now();
    if (t - last < everyMs) {
      skipped++;
      return;
    }
    last = t;
    log[level](msg, skipped ? { ...fields, repeated: skipped } : fields);
    skipped = 0;
  };
}
