/**
 * The svcmaps app as the benchmarks see it: the BUILT code (dist/, so `npm run build` first: worker threads then
 * start from compiled modules, as in production, not through tsx), real config pipeline, real SQLite store in the
 * data directory given as argv[2] (the parent owns and removes it), an optional hot-tier size in bytes as argv[3],
 * SVCMAPS_* environment settings (as `svcmaps serve` reads them), production meter flush interval, a silent logger
 * (or, with BENCH_LOG=<file>, the production request log written to that file, e.g. /dev/null, so its cost is
 * measured too), 127.0.0.1 and a free port. Limits are raised so the
 * benchmark measures their cost, never their effect.
 * Prints {"port", "apiKey"} on stdout when ready (with BENCH_ANNOUNCE=listening, as soon as it listens).
 */
import { openSync } from 'node:fs';
import { announce, stopWith } from './lifecycle.js';
import { loadBuilt } from './built.js';

const [dataDir, memory] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: serve-app.ts <data-dir> [hot-tier-bytes]');

const { createApp } = await loadBuilt<typeof import('../src/app.js')>('app.js');
const { loadConfig } = await loadBuilt<typeof import('../src/config/load.js')>('config/load.js');
const { silentLogger } = await loadBuilt<typeof import('../src/core/log.js')>('core/log.js');
const { jsonLogger } = await loadBuilt<typeof import('../src/ops/log.js')>('ops/log.js');

const app = createApp(
  loadConfig({
    flags: {
      host: '127.0.0.1',
      port: 0,
      data_dir: dataDir,
      ...(memory ? { cache: { memory_bytes: Number(memory) } } : {}),
      limits: { tile_ip_per_minute: 1_000_000_000 },
    },
    env: process.env,
  }),
  { log: process.env.BENCH_LOG ? jsonLogger('info', openSync(process.env.BENCH_LOG, 'a')) : silentLogger },
);
stopWith(() => app.close());

const key = app.services.keyAdmin.create({
  name: 'bench',
  plan: 'bench',
  perMinute: 100_000_000,
  daily: 1_000_000_000,
});
const server = await app.listen();
// The road graph loads in the background (then the routing threads warm up): routes are real from the first measured
// request. BENCH_ANNOUNCE=listening announces at once instead, for a benchmark that times the start-up itself.
if (process.env.BENCH_ANNOUNCE !== 'listening') await app.loaded;
announce({ port: server.port, apiKey: key.key });
