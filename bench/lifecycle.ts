/**
 * Shutdown wiring shared by the benchmark's server processes. A server stops on SIGTERM/SIGINT, and also when its
 * stdin closes, so it never outlives the benchmark that started it (even if that one is killed with SIGKILL).
 */
export function stopWith(close: () => void): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    try {
      close();
    } catch (e) {
      process.stderr.write(`bench server: close failed: ${(e as Error).message}\n`);
    }
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.stdin.resume();
}

/** The single line a server prints on stdout once it accepts connections. */
export interface ReadyLine {
  port: number;
  apiKey?: string;
}

export const announce = (line: ReadyLine): void => void process.stdout.write(JSON.stringify(line) + '\n');
