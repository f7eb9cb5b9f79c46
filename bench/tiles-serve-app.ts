/**
 * The svcmaps app for the tiles benchmark: data directory argv[2] (already holding render.db and/or seeded
 * MBTiles), hot tier size argv[3] bytes, limits raised so they are measured, never hit. Prints {"port","apiKey"}.
 */
import { createApp } from '../src/app.js';
import { configWith } from '../src/config/load.js';
import { silentLogger } from '../src/core/log.js';
import { announce, stopWith } from './lifecycle.js';

const [dataDir, memory] = process.argv.slice(2);
if (!dataDir || !memory) throw new Error('usage: tiles-serve-app.ts <data-dir> <hot-tier-bytes>');

const app = createApp(
  configWith({
    host: '127.0.0.1',
    port: 0,
    data_dir: dataDir,
    cache: { memory_bytes: Number(memory) },
    limits: { tile_ip_per_minute: 1_000_000_000 },
  }),
  { log: silentLogger },
);
stopWith(() => app.close());
const key = app.services.keyAdmin.create({ name: 'bench', plan: 'bench', perMinute: 100_000_000, daily: 1_000_000_000 });
const server = await app.listen();
announce({ port: server.port, apiKey: key.key });
