import { apiChecks } from './checks-api.js';
import { tileChecks } from './checks-tiles.js';
import { Skip, type Check, type CheckState, type Target } from './types.js';

/** Every check, in running order (hot follows cold); built per run so each run uses a fresh tile. */
export const allChecks = (): Check[] => [...apiChecks, ...tileChecks()];

export interface SelftestReport {
  target: string;
  mode: 'local' | 'remote';
  verdict: 'pass' | 'fail';
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
  checks: CheckState[];
}

/** Runs the checks one after another (their order matters: hot follows cold), reporting every state change. */
export async function runChecks(
  t: Target,
  onChange: (states: CheckState[]) => void,
  checks: Check[] = allChecks(),
  perCheckMs = 60_000,
): Promise<SelftestReport> {
  const t0 = performance.now();
  const states: CheckState[] = checks.map((c) => ({ id: c.id, label: c.label, status: 'pending' }));
  const publish = () => onChange(states.map((s) => ({ ...s })));
  publish();
  for (let i = 0; i < checks.length; i++) {
    const s = states[i]!;
    s.status = 'running';
    publish();
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${perCheckMs / 1000} s`)), perCheckMs);
      });
      const r = await Promise.race([checks[i]!.run(t), timeout]);
      if (r instanceof Skip) Object.assign(s, { status: 'skip', detail: `skipped: ${r.reason}` });
      else Object.assign(s, { status: 'pass', detail: r });
    } catch (e) {
      // fetch() hides the reason (ECONNREFUSED, bad port, certificate) in `cause`; the operator needs it.
      const err = e as Error & { cause?: { code?: string; message?: string } };
      const why = err.cause?.code ?? err.cause?.message;
      Object.assign(s, { status: 'fail', detail: why ? `${err.message} (${why})` : err.message });
    } finally {
      clearTimeout(timer);
    }
    s.ms = Math.round(performance.now() - started);
    publish();
  }
  const count = (st: string) => states.filter((s) => s.status === st).length;
  return {
    target: t.url,
    mode: t.mode,
    verdict: count('fail') ? 'fail' : 'pass',
    passed: count('pass'),
    failed: count('fail'),
    skipped: count('skip'),
    ms: Math.round(performance.now() - t0),
    checks: states,
  };
}
