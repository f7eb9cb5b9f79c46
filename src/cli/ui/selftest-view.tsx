import { Box, Text } from 'ink';
import type { CheckState } from '../../ops/selftest/types.js';
import type { SelftestReport } from '../../ops/selftest/runner.js';
import { checkLine, verdictLine } from './selftest-lines.js';

export interface SelftestViewProps {
  title: string;
  /** What is happening before the checks start (copying, starting); hidden once they run. */
  phase?: string;
  states: CheckState[];
  report?: SelftestReport;
  strict?: boolean;
}

const COLOUR: Record<CheckState['status'], string | undefined> = {
  pending: 'gray',
  running: 'cyan',
  pass: 'green',
  fail: 'red',
  skip: 'yellow',
};

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
