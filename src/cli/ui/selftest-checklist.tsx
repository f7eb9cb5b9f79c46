import { render } from 'ink';
import type { SelftestReport } from '../../ops/selftest/runner.js';
import type { CheckState } from '../../ops/selftest/types.js';
import { SelftestView } from './selftest-view.js';

/** The self-test checklist drawn live on the terminal: phase text, then each check's state, then the verdict. */
export interface SelftestChecklist {
  phase(text: string): void;
  update(states: CheckState[]): void;
  finish(report: SelftestReport): void;
  abort(): void;
}

export function selftestChecklist(title: string, strict: boolean): SelftestChecklist {
  let props = { title, phase: '', states: [] as CheckState[], report: undefined as SelftestReport | undefined, strict };
  const view = render(<SelftestView {...props} />, { patchConsole: false, exitOnCtrlC: false });
  const draw = () => view.rerender(<SelftestView {...props} />);
  return {
    phase: (phase) => ((props = { ...props, phase }), draw()),
    update: (states) => ((props = { ...props, states }), draw()),
    finish: (report) => {
      props = { ...props, report };
      draw();
      view.unmount();
    },
    abort: () => view.unmount(),
  };
}
