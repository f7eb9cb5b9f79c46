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

/** The rate shown, and the ETA, are over the last this many ms of the stage: see progressBar. */
const RATE_WINDOW_MS = 20_000;

/**
 * The rate and ETA are the recent ones (the last RATE_WINDOW_MS), not the stage's average: a stage whose pace
 * changes, as a contraction slows from millions of nodes a second to tens of thousands near its end, would otherwise
 * promise an end several times too soon. `now` is the clock (tests).
 */
export function progressBar(
  write: (t: string) => void,
  tty: boolean,
  unit: 'bytes' | 'items' = 'bytes',
  now: () => number = () => performance.now(),
): ProgressBar {
  let lastPrint = 0;
  let lastLine = '';
  // (time, done) at each line printed, the first one older than the window kept as the rate's start
  const samples: Array<[number, number]> = [[now(), 0]];
  const fmt = (n: number) =>
    unit === 'bytes' ? fmtBytes(n) : n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(1);
  return {
    update(stage, done, total) {
      const t = now();
      if (t - lastPrint < (tty ? 100 : 5000) && done < total) return;
      lastPrint = t;
      samples.push([t, done]);
      while (samples.length > 2 && t - samples[1]![0] >= RATE_WINDOW_MS) samples.shift();
      const [t0, d0] = samples[0]!;
      const rate = (done - d0) / Math.max((t - t0) / 1000, 1e-3);
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
