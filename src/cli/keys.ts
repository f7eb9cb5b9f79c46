import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { AppError } from '../core/errors.js';
import { parseDuration } from '../core/duration.js';
import { systemClock, nowSeconds } from '../core/clock.js';
import { KeyAdmin, SharedKeyAdmin, type KeyAdminApi, type KeyView } from '../auth/key-admin.js';
import { silentLogger } from '../core/log.js';
import { KEY_ID_RE } from '../auth/api-keys.js';
import { SUPER_ADMIN } from '../auth/caller.js';
import { openDb } from '../store/db.js';
import { prepareDataDir } from '../store/data-dir.js';
import { KeysRepo } from '../store/keys-repo.js';
import { CliError, type Io } from './io.js';
import { commandConfig, positiveInt, type CommonOptions } from './options.js';

const ROLES = ['user', SUPER_ADMIN];

/**
 * Opens the store the server uses: the data directory's SQLite (WAL lets this run while a server is up on it), or,
 * with a `cluster` section, the shared PostgreSQL, announcing changes over Redis so every node follows at once.
 */
export async function withAdmin<T>(
  io: Io,
  opts: CommonOptions,
  fn: (admin: KeyAdminApi, defaults: ReturnType<typeof commandConfig>) => T | Promise<T>,
): Promise<T> {
  const config = commandConfig(io, opts);
  const nowS = () => nowSeconds(systemClock);
  const notFound = (e: unknown) => {
    if (e instanceof AppError && e.code === 'KEY_NOT_FOUND') throw new CliError(e.message);
    throw e;
  };
  // loaded here, not at the top: every command (serve included) would otherwise load the pg and redis clients
  const { openCluster } = await import('../cluster.js');
  const cluster = openCluster(config.cluster, silentLogger, nowS);
  if (cluster) {
    try {
      await cluster.start(() => undefined, { requirePostgres: true });
      return await fn(new SharedKeyAdmin(cluster.keys, cluster.events, nowS), config);
    } catch (e) {
      return notFound(e);
    } finally {
      await cluster.close();
    }
  }
  const dir = prepareDataDir(config.data_dir);
  const db = openDb(dir.storePath);
  try {
    return await fn(new KeyAdmin(new KeysRepo(db), nowS), config);
  } catch (e) {
    return notFound(e);
  } finally {
    db.close();
  }
}

const describe = (k: KeyView): string =>
  [
    `id          ${k.id}`,
    `name        ${k.name || '-'}`,
    `key         ${k.prefix}… (shown only at creation)`,
    `state       ${k.state}`,
    `role        ${k.role}`,
    `plan        ${k.plan}`,
    `limits      ${k.per_minute}/minute, ${k.daily} misses/day`,
    `created     ${k.created_at}`,
    `expires     ${k.expires_at ?? 'never'}`,
    ...(k.revoked_at ? [`revoked     ${k.revoked_at}`] : []),
  ].join('\n') + '\n';

function table(keys: KeyView[]): string {
  if (!keys.length) return 'No API keys yet. Create one with: svcmaps keys create --name NAME\n';
  const rows = keys.map((k) => [k.id, k.state, k.role, k.plan, `${k.per_minute}/min`, `${k.daily}/day`, k.name]);
  const head = ['ID', 'STATE', 'ROLE', 'PLAN', 'RATE', 'DAILY', 'NAME'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}

function checkId(id: string): string {
  if (!KEY_ID_RE.test(id)) throw new CliError(`"${id}" is not a key id (they look like key_0123456789abcdef)`);
  return id;
}

export function makeKeysCommand(io: Io): CommandUnknownOpts {
  const keys = new Command('keys').description('create, list, show and revoke API keys');
  const common = <A extends unknown[]>(c: Command<A>) =>
    c
      .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
      .option('--config <file>', 'config file (JSON)')
      .option('--json', 'machine-readable output');

  common(keys.command('create').description('create an API key; prints it once'))
    .option('--name <name>', 'label for the key')
    .option('--plan <plan>', 'plan label')
    .option('--per-minute <n>', 'requests per minute', positiveInt('--per-minute'))
    .option('--daily <n>', 'daily quota (cache misses)', positiveInt('--daily'))
    .option('--expires-in <duration>', 'lifetime such as 30d, 12h, 90s')
    .option('--role <role>', `role: ${ROLES.join(' or ')}`, 'user')
    .action((o) => {
      if (!ROLES.includes(o.role)) throw new CliError(`--role must be one of ${ROLES.join(', ')}, got "${o.role}"`);
      const expiresInS = o.expiresIn === undefined ? undefined : parseDuration(o.expiresIn);
      if (o.expiresIn !== undefined && expiresInS === undefined)
        throw new CliError(`--expires-in must look like 30d, 12h, 15m or 90s, got "${o.expiresIn}"`);
      return withAdmin(io, o, async (admin, cfg) => {
        const k = await admin.create({
          name: o.name,
          plan: o.plan ?? cfg.limits.default_plan,
          role: o.role,
          perMinute: o.perMinute ?? cfg.limits.default_per_minute,
          daily: o.daily ?? cfg.limits.default_daily,
          expiresInS,
        });
        if (o.json) return io.out(JSON.stringify(k) + '\n');
        io.out(`${k.key}\n\n${describe(k)}\nStore the key now: only its SHA-256 is kept, it cannot be shown again.\n`);
      });
    });

  common(keys.command('list').description('list API keys (never their secrets)')).action((o) =>
    withAdmin(io, o, async (admin) => {
      const all = await admin.list();
      io.out(o.json ? JSON.stringify(all) + '\n' : table(all));
    }),
  );

  common(keys.command('show').description('show one API key').argument('<id>')).action((id: string, o) =>
    withAdmin(io, o, async (admin) => {
      const k = await admin.show(checkId(id));
      io.out(o.json ? JSON.stringify(k) + '\n' : describe(k));
    }),
  );

  common(
    keys
      .command('revoke')
      .description('revoke an API key at once (tile tokens of it stop within the key cache lifetime)')
      .argument('<id>'),
  ).action((id: string, o) =>
    withAdmin(io, o, async (admin) => {
      const k = await admin.revoke(checkId(id));
      io.out(o.json ? JSON.stringify(k) + '\n' : `Revoked ${k.id} at ${k.revoked_at}\n`);
    }),
  );
  return keys;
}
