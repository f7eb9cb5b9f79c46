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
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
