import { render } from 'ink';
import { QuotasView, type QuotasViewProps } from './quotas-view.js';

/** Runs the live quota table on the terminal until the user quits (q or Ctrl-C). */
export async function watchQuotas(props: QuotasViewProps): Promise<void> {
  const app = render(<QuotasView {...props} />, { exitOnCtrlC: true });
  await app.waitUntilExit();
}
