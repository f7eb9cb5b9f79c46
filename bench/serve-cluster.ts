/**
 * One cluster node as bench/cluster.ts sees it: like serve-app.ts (real config pipeline, its own data directory as
 * argv[2], production meter flush, silent logger, 127.0.0.1 and a free port), with the shared PostgreSQL and Redis
 * given as argv[3] and argv[4]. With BENCH_CREATE_KEY=1 it creates the benchmark key in the shared store.
 * Prints {"port", "apiKey"?} on stdout when ready.
 */
import { createApp } from '../src/app.js';
import { configWith } from '../src/config/load.js';
import { silentLogger } from '../src/core/log.js';
import { announce, stopWith } from './lifecycle.js';

const [dataDir, postgresUrl, redisUrl] = process.argv.slice(2);
if (!dataDir || !postgresUrl || !redisUrl)
  throw new Error('usage: serve-cluster.ts <data-dir> <postgres-url> <redis-url>');

const app = createApp(
  configWith({
    host: '127.0.0.1',
    port: 0,
    data_dir: dataDir,
    limits: { tile_ip_per_minute: 1_000_000_000 },
    cluster: { postgres_url: postgresUrl, redis_url: redisUrl },
  }),
  { log: silentLogger },
);
stopWith(() => app.close());
const server = await app.listen();
const key =
  process.env.BENCH_CREATE_KEY === '1'
    ? await app.services.keys.create({ name: 'bench', plan: 'bench', perMinute: 100_000_000, daily: 1_000_000_000 })
    : undefined;
announce({ port: server.port, apiKey: key?.key });
