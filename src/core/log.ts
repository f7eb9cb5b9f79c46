/** Structured JSON-lines logger; one object per line so operators can grep and ship logs as they are. */
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(
  min: Level = 'info',
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const emit = (level: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < ORDER[min]) return;
    write(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields }) + '\n');
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
