import type { CheckState } from '../../ops/selftest/types.js';
import type { SelftestReport } from '../../ops/selftest/runner.js';

/** The self-test's plain-text lines, shared by the ink checklist and the line output (which must not load ink). */
const MARK: Record<CheckState['status'], string> = {
  pending: '·',
  running: '…',
  pass: '✓',
  fail: '✗',
  skip: '–',
};
/** One line per check; the same text the non-TTY output prints, so logs and terminals read alike. */
export function checkLine(s: CheckState, labelWidth = 30): string {
  const ms = s.ms === undefined ? '' : `${s.ms} ms`;
  return `${MARK[s.status]} ${s.label.padEnd(labelWidth)} ${ms.padStart(8)}  ${s.detail ?? ''}`.trimEnd();
}

export function verdictLine(r: SelftestReport, strict = false): string {
  const ok = r.verdict === 'pass' && !(strict && r.skipped);
  const parts = [
    `${r.passed} passed`,
    ...(r.failed ? [`${r.failed} failed`] : []),
    ...(r.skipped ? [`${r.skipped} skipped`] : []),
  ];
  return `${ok ? 'PASS' : 'FAIL'}: ${parts.join(', ')} in ${(r.ms / 1000).toFixed(1)} s${strict && r.skipped ? ' (--strict: skips fail)' : ''}`;
}
