import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { nowSeconds, systemClock, utcDay } from '../core/clock.js';
import { silentLogger } from '../core/log.js';
import { openDb } from '../store/db.js';
import { prepareDataDir, readSecret } from '../store/data-dir.js';
import { KeysRepo } from '../store/keys-repo.js';
import { UsageRepo } from '../store/usage-repo.js';
import { CliError, type Io } from './io.js';
import { commandConfig } from './options.js';

export function makeClusterCommand(io: Io): CommandUnknownOpts {
  const cluster = new Command('cluster').description('several nodes sharing PostgreSQL and Redis');
  cluster
    .command('migrate')
    .description("copy a single node's keys and today's usage from its SQLite store into the cluster's PostgreSQL")
    .option('--data <dir>', 'data directory of the single node (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON) with the cluster section (or env SVCMAPS_CLUSTER__POSTGRES_URL)')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const config = commandConfig(io, o);
      const dir = prepareDataDir(config.data_dir);
      // The node's tile-token secret becomes the cluster's if the cluster has none yet: its tokens keep working.
      const own = readSecret(dir.secretPath);
      const offer = own.ok ? own.secret : undefined;
      const { openCluster } = await import('../cluster.js'); // pg and redis clients, for this command only
      const shared = openCluster(config.cluster, silentLogger, () => nowSeconds(systemClock), {
        tileTokens: { offer },
      });
      if (!shared)
        throw new CliError('no cluster configured: set cluster.postgres_url (or SVCMAPS_CLUSTER__POSTGRES_URL)');
      const db = openDb(dir.storePath);
      try {
        const day = utcDay(Date.now());
        const keys = new KeysRepo(db).list();
        const usage = new UsageRepo(db).forDay(day);
        await shared.start(() => undefined, { requirePostgres: true });
        const copied = await shared.importFrom(keys, usage);
        const secret = shared.tileSecret();
        const tileSecret = offer && secret?.equals(offer) ? 'shared' : 'kept';
        const result = {
          day,
          keys: keys.length,
          keys_added: copied.keys,
          usage_rows: copied.usage,
          tile_token_secret: tileSecret,
        };
        io.out(
          o.json
            ? JSON.stringify(result) + '\n'
            : `Copied ${copied.keys} of ${keys.length} keys (the others were there already) and ${copied.usage} usage rows of ${day} into PostgreSQL.\n` +
                (tileSecret === 'shared'
                  ? "The node's tile-token secret is the cluster's: tokens it minted verify on every node.\n"
                  : 'The cluster keeps its own tile-token secret: tokens this node minted must be minted again.\n'),
        );
      } finally {
        db.close();
        await shared.close();
      }
    });
  return cluster;
}
