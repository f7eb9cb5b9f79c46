import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { KEY_ID_RE } from '../auth/api-keys.js';
import { prepareDataDir } from '../store/data-dir.js';
import { formatTable, quotaTable, readQuotas } from '../ops/quotas.js';
import { watchQuotas } from './ui/quotas-watch.js';
import { CliError, type Io } from './io.js';
import { commandConfig, positiveInt } from './options.js';

export function makeQuotasCommand(io: Io): CommandUnknownOpts {
  return new Command('quotas')
    .description('per-key usage today (UTC) by bucket against the daily quota, rate limit, last seen and plan')
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--key <id>', 'one key only')
    .option('--watch', 'live view, redrawn every --interval seconds (q to quit)')
    .option('--interval <seconds>', 'refresh interval for --watch', positiveInt('--interval'), 2)
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      if (o.key && !KEY_ID_RE.test(o.key))
        throw new CliError(`"${o.key}" is not a key id (they look like key_0123456789abcdef)`);
      const root = prepareDataDir(commandConfig(io, o).data_dir).root;
      const load = () => readQuotas(root, Date.now(), o.key);
      const first = load();
      if (o.key && !first.keys.length) throw new CliError(`No API key with id ${o.key}`);
      if (o.watch) {
        if (o.json || !process.stdout.isTTY)
          throw new CliError('--watch needs a terminal; use --json (repeatedly) in scripts');
        await watchQuotas({ load, intervalMs: o.interval * 1000 });
        return;
      }
      if (o.json) return io.out(JSON.stringify(first) + '\n');
      if (!first.keys.length) return io.out('No API keys yet. Create one with: svcmaps keys create --name NAME\n');
      io.out(
        `Usage on ${first.day} (UTC). GATHER and TILES are cache misses against the daily quota (reset at midnight UTC);\nREQ/MIN is the observed rate (see --watch) over the per-minute limit.\n`,
      );
      io.out(formatTable(quotaTable(first)));
    });
}
