import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { KEY_ID_RE } from '../auth/api-keys.js';
import { prepareDataDir } from '../store/data-dir.js';
import { formatTable, quotaTable, readQuotas, type QuotaSnapshot } from '../ops/quotas.js';
import type { Cluster } from '../cluster.js';
import { silentLogger } from '../core/log.js';
import { nowSeconds, systemClock } from '../core/clock.js';
import { CliError, type Io } from './io.js';
import { commandConfig, positiveInt } from './options.js';

export function makeQuotasCommand(io: Io): CommandUnknownOpts {
  const cmd = new Command('quotas')
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
      const config = commandConfig(io, o);
      const { openCluster } = await import('../cluster.js'); // pg and redis clients, for this command only
      const cluster = openCluster(config.cluster, silentLogger, () => nowSeconds(systemClock));
      try {
        await report(cluster, config.data_dir);
      } finally {
        await cluster?.close();
      }
    });

  /** With a cluster the figures are every node's, read from PostgreSQL; otherwise the data directory's store. */
  async function report(cluster: Cluster | undefined, dataDir: string): Promise<void> {
    const o = cmd.opts();
    let load: () => QuotaSnapshot;
    let refresh: NodeJS.Timeout | undefined;
    if (cluster) {
      await cluster.start(() => undefined, { requirePostgres: true });
      let latest = await cluster.quotas(Date.now(), o.key);
      let failed: Error | undefined;
      // The live view redraws from the last read (reads follow in the background) and shows why the last one failed.
      load = () => {
        if (failed) throw failed;
        return latest;
      };
      if (o.watch)
        refresh = setInterval(
          () =>
            void cluster.quotas(Date.now(), o.key).then(
              (s) => {
                latest = s;
                failed = undefined;
              },
              (e: unknown) => (failed = e instanceof Error ? e : new Error(String(e))),
            ),
          o.interval * 1000,
        );
    } else {
      const root = prepareDataDir(dataDir).root;
      load = () => readQuotas(root, Date.now(), o.key);
    }
    try {
      await show(load);
    } finally {
      clearInterval(refresh);
    }
  }

  async function show(load: () => QuotaSnapshot): Promise<void> {
    const o = cmd.opts();
    const first = load();
    if (o.key && !first.keys.length) throw new CliError(`No API key with id ${o.key}`);
    if (o.watch) {
      if (o.json || !process.stdout.isTTY)
        throw new CliError('--watch needs a terminal; use --json (repeatedly) in scripts');
      const { watchQuotas } = await import('./ui/quotas-watch.js'); // ink: only the live view needs it
      await watchQuotas({ load, intervalMs: o.interval * 1000 });
      return;
    }
    if (o.json) return io.out(JSON.stringify(first) + '\n');
    if (!first.keys.length) return io.out('No API keys yet. Create one with: svcmaps keys create --name NAME\n');
    io.out(
      `Usage on ${first.day} (UTC). GATHER and TILES are cache misses against the daily quota (reset at midnight UTC);\nREQ/MIN is the observed rate (see --watch) over the per-minute limit.\n`,
    );
    io.out(formatTable(quotaTable(first)));
  }
  return cmd;
}
