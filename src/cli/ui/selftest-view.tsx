import { Box, Text } from 'ink';
import type { CheckState } from '../../ops/selftest/types.js';
import type { SelftestReport } from '../../ops/selftest/runner.js';

export interface SelftestViewProps {
  title: string;
  /** What is happening before the checks start (copying, starting); hidden once they run. */
  phase?: string;
  states: CheckState[];
  report?: SelftestReport;
  strict?: boolean;
}

export const MARK: Record<CheckState['status'], string> = {
  pending: '·',
  running: '…',
  pass: '✓',
  fail: '✗',
  skip: '–',
};
const COLOUR: Record<CheckState['status'], string | undefined> = {
  pending: 'gray',
  running: 'cyan',
  pass: 'green',
  fail: 'red',
  skip: 'yellow',
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

/** The live checklist of `svcmaps selftest` on a terminal. */
export function SelftestView({ title, phase, states, report, strict }: SelftestViewProps) {
  const width = Math.max(10, ...states.map((s) => s.label.length));
  const ok = report && report.verdict === 'pass' && !(strict && report.skipped);
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      {phase && !report && <Text color="cyan">{phase}</Text>}
      {states.map((s) => (
        <Text key={s.id} color={COLOUR[s.status]} dimColor={s.status === 'pending'}>
          {checkLine(s, width)}
        </Text>
      ))}
      {report && (
        <Box marginTop={1}>
          <Text bold color={ok ? 'green' : 'red'}>
            {verdictLine(report, strict)}
          </Text>
        </Box>
      )}
    </Box>
  );
}
