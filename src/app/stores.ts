import type { Config } from '../config/defaults.js';
import { nowSeconds, type Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { openDb, type Db } from '../store/db.js';
import { ensureSecret, prepareDataDir, readSecret } from '../store/data-dir.js';
import { KeysRepo } from '../store/keys-repo.js';
import { UsageRepo } from '../store/usage-repo.js';
import { SessionsRepo } from '../store/sessions-repo.js';
import { Authenticator } from '../auth/authenticator.js';
import { SessionGuard } from '../auth/sessions.js';
import { Meter } from '../limits/meter.js';
import { openCluster, type Cluster } from '../cluster.js';

/** JWT secrets shorter than this are refused: a guessable HMAC key would let anyone forge sessions. */
const MIN_JWT_SECRET_BYTES = 32;

export interface Stores {
  /** The data directory, created if absent. */
  root: string;
  db: Db;
  /** This node's keys in svcmaps.db, also in a cluster (the CLI's and the tests' view on one node). */
  keys: KeysRepo;
  /** Undefined on a single node. */
  cluster: Cluster | undefined;
  auth: Authenticator;
  meter: Meter;
  nowS: () => number;
}

/** The data directory, svcmaps.db and the secrets, or the cluster's shared stores; and who reads them first. */
export function openStores(config: Config, clock: Clock, log: Logger, meterFlushMs: number): Stores {
  const dir = prepareDataDir(config.data_dir);
  ensureSecret(dir.secretPath);
  const db = openDb(dir.storePath);
  const keys = new KeysRepo(db);
  const nowS = () => nowSeconds(clock);

  const secret = readSecret(dir.secretPath);
  if (!secret.ok)
    log.error('tile-token secret refused; tile tokens are disabled (fail closed)', { reason: secret.reason });
  const jwtSecret = Buffer.from(config.auth.jwt_secret, 'utf8');
  if (jwtSecret.length > 0 && jwtSecret.length < MIN_JWT_SECRET_BYTES) {
    log.error(
      `auth.jwt_secret is shorter than ${MIN_JWT_SECRET_BYTES} bytes; JWT bearer auth is disabled (fail closed)`,
    );
  }

  // Several nodes: keys, usage, per-minute limits and sessions move to the shared stores (see src/cluster.ts).
  // The tile-token secret is then the cluster's (this node's own is offered in case the cluster has none yet).
  const cluster = openCluster(config.cluster, log, nowS, {
    tileTokens: { offer: secret.ok ? secret.secret : undefined },
  });
  const auth = new Authenticator({
    keys: cluster?.keys ?? keys,
    sharedStore: cluster !== undefined,
    sharedSessions: cluster?.sessions,
    sessions: new SessionGuard(new SessionsRepo(db)),
    tileSecret: cluster ? () => cluster.tileSecret() : secret.ok ? secret.secret : undefined,
    jwtSecret: jwtSecret.length >= MIN_JWT_SECRET_BYTES ? jwtSecret : undefined,
    tileTokenTtlS: config.auth.tile_token_ttl_s,
    keyCacheTtlS: config.auth.key_cache_ttl_s,
    jwtPerMinute: config.limits.jwt_per_minute,
    jwtDaily: config.limits.default_daily,
    nowS,
    log,
  });
  const meter = new Meter(cluster?.usage ?? new UsageRepo(db), log, meterFlushMs);
  return { root: dir.root, db, keys, cluster, auth, meter, nowS };
}

/** The single node's store check for /health (a cluster reports its own). */
export function sqlCheck(db: Db): string {
  try {
    return db.prepare('SELECT 1 AS ok').get() ? 'ok' : 'no answer';
  } catch (e) {
    return (e as Error).message;
  }
}
