/**
 * Reload of imported data without a restart. Engines that hold files from the data directory register a hook;
 * `App.reload()` (SIGHUP, `svcmaps reload`) runs them in order and reports each one. A hook swaps in a new engine
 * object and hands the old one to `retire`, which closes it only after requests that already hold it had time to
 * finish (readers of the old file keep a consistent snapshot meanwhile).
 */
import { processWarnings, type Logger } from '../core/log.js';

export interface ReloadResult {
  name: string;
  ok: boolean;
  detail: string;
  ms: number;
}

export type ReloadHook = () => Promise<string | void> | string | void;

export class ReloadHooks {
  private readonly hooks: Array<{ name: string; run: ReloadHook }> = [];
  private readonly retiring = new Set<{ timer: NodeJS.Timeout; close: () => void }>();
  private running: Promise<ReloadResult[]> | undefined;

  constructor(
    private readonly retireAfterMs = 30_000,
    private readonly log: Logger = processWarnings,
  ) {}

  register(name: string, run: ReloadHook): void {
    this.hooks.push({ name, run });
  }

  get names(): string[] {
    return this.hooks.map((h) => h.name);
  }

  /** Runs every hook; one failing hook does not stop the others. Overlapping calls share one run. */
  run(): Promise<ReloadResult[]> {
    this.running ??= this.runAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runAll(): Promise<ReloadResult[]> {
    const out: ReloadResult[] = [];
    for (const h of this.hooks) {
      const t0 = performance.now();
      try {
        const detail = await h.run();
        out.push({ name: h.name, ok: true, detail: detail || 'reloaded', ms: Math.round(performance.now() - t0) });
      } catch (e) {
        out.push({ name: h.name, ok: false, detail: (e as Error).message, ms: Math.round(performance.now() - t0) });
      }
    }
    return out;
  }

  /** Closes a replaced engine later; `closeAll` (shutdown) closes whatever is still waiting. */
  retire(close: () => void): void {
    const entry = {
      close,
      timer: setTimeout(() => {
        this.retiring.delete(entry);
        this.closeRetired(close);
      }, this.retireAfterMs),
    };
    entry.timer.unref();
    this.retiring.add(entry);
  }

  /** A retired engine that fails to close is reported; the others are closed all the same. */
  private closeRetired(close: () => void): void {
    try {
      close();
    } catch (e) {
      this.log.warn('a retired engine failed to close', { error: (e as Error)?.stack ?? String(e) });
    }
  }

  closeAll(): void {
    for (const e of this.retiring) {
      clearTimeout(e.timer);
      this.closeRetired(e.close);
    }
    this.retiring.clear();
  }
}
