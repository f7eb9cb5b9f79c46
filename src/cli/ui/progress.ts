/**
 * A one-line progress bar with rate and ETA for long commands (import, seed). On a TTY it redraws in place; otherwise
 * it prints a line every few seconds so logs stay readable.
 */
export interface ProgressBar {
  update(stage: string, done: number, total: number): void;
  done(message: string): void;
}

const fmtBytes = (n: number) =>
  n > 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n > 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${(n / 1e3).toFixed(0)} kB`;
const fmtTime = (s: number) =>
  !Number.isFinite(s) ? '--:--' : `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;

export function progressBar(write: (t: string) => void, tty: boolean, unit: 'bytes' | 'items' = 'bytes'): ProgressBar {
  const started = performance.now();
  let lastPrint = 0;
  let lastLine = '';
  const fmt = (n: number) =>
    unit === 'bytes' ? fmtBytes(n) : n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(1);
  return {
    update(stage, done, total) {
      const now = performance.now();
      if (now - lastPrint < (tty ? 100 : 5000) && done < total) return;
      lastPrint = now;
      const secs = (now - started) / 1000;
      const rate = done / Math.max(secs, 1e-3);
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const width = 24;
      const bar = '█'.repeat(Math.round(frac * width)).padEnd(width, '░');
      const eta = rate > 0 ? (total - done) / rate : Infinity;
      lastLine = `${stage.padEnd(10)} ${bar} ${(frac * 100).toFixed(0).padStart(3)}%  ${fmt(done)}/${fmt(total)}  ${fmt(rate)}/s  ETA ${fmtTime(eta)}`;
      write(tty ? `\r\x1b[2K${lastLine}` : `${lastLine}\n`);
    },
    done(message) {
      write(tty ? `\r\x1b[2K${message}\n` : `${message}\n`);
    },
  };
}
