/**
 * One node against two nodes sharing PostgreSQL and Redis, on credentialed JSON (auth + per-key limit + metering +
 * envelope, no engine work: GET /maps/v1/autocomplete?q=%20 with X-API-Key).
 *
 *   npm run bench:cluster
 *
 * Runs, each node in its own process, PostgreSQL and redis-server started from the Debian packages in temp dirs:
 *   single   one node on its own SQLite store (in-process limiter): the default appliance
 *   cluster1 one node of a cluster (key mirror in memory, per-minute limit in Redis, usage to PostgreSQL)
 *   cluster2 two nodes of the same cluster, loaded at the same time (half the connections each); summed
 * Throughput at BENCH_CONNECTIONS (10) for BENCH_DURATION_S (7) after a warm-up, and latency at one connection (the
 * per-request cost of the shared limit, without queueing). The load generator runs on the same machine: with few
 * cores it competes with the nodes, PostgreSQL and Redis, so read the two-node figure with the core count beside it.
 * Results are also written to bench/results/cluster-<timestamp>.json.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { TestPostgres, TestRedis } from '../test/helpers/cluster.js';
import type { ReadyLine } from './lifecycle.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const num = (name: string, dflt: number) => Number(process.env[name] || dflt);
const DURATION_S = num('BENCH_DURATION_S', 7);
const WARMUP_S = num('BENCH_WARMUP_S', 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 10);
const PATH = '/maps/v1/autocomplete?q=%20';

const children = new Set<ChildProcess>();
const dirs: string[] = [];

async function node(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ReadyLine> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout }).once('line', res);
    child.once('exit', (code) => rej(new Error(`${script} exited ${code}`)));
  });
  return JSON.parse(line) as ReadyLine;
}

const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svcmaps-bench-'));
  dirs.push(d);
  return d;
};

function load(port: number, key: string, connections: number, durationS: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}${PATH}`,
    headers: { 'X-API-Key': key },
    connections,
    duration: durationS,
  });
}

interface Row {
  run: string;
  req_s: number;
  p50_ms: number;
  p99_ms: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non2xx: number;
}

async function measure(run: string, ports: number[], key: string): Promise<Row> {
  const per = Math.max(1, Math.round(CONNECTIONS / ports.length));
  await Promise.all(ports.map((p) => load(p, key, per, WARMUP_S)));
  const results = await Promise.all(ports.map((p) => load(p, key, per, DURATION_S)));
  const single = await load(ports[0]!, key, 1, DURATION_S);
  return {
    run,
    req_s: Math.round(results.reduce((s, r) => s + r.requests.average, 0)),
    p50_ms: Math.max(...results.map((r) => r.latency.p50)),
    p99_ms: Math.max(...results.map((r) => r.latency.p99)),
    latency_p50_ms: single.latency.p50,
    latency_p99_ms: single.latency.p99,
    non2xx: results.reduce((s, r) => s + r.non2xx, 0) + single.non2xx,
  };
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const one = await node('serve-app.ts', [dataDir()]);
  rows.push(await measure('single (SQLite)', [one.port], one.apiKey!));

  const pg = new TestPostgres();
  const redis = new TestRedis();
  try {
    await pg.init();
    await redis.start();
    const a = await node('serve-cluster.ts', [dataDir(), pg.url, redis.url], { BENCH_CREATE_KEY: '1' });
    rows.push(await measure('cluster, 1 node', [a.port], a.apiKey!));
    const b = await node('serve-cluster.ts', [dataDir(), pg.url, redis.url]);
    rows.push(await measure('cluster, 2 nodes', [a.port, b.port], a.apiKey!));
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await redis.destroy();
    pg.destroy();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }

  const cores = availableParallelism();
  console.log(`cores: ${cores}; ${CONNECTIONS} connections, ${DURATION_S} s per run; latency at 1 connection`);
  console.table(rows);
  const [single, c1, c2] = rows;
  console.log(`two nodes / one cluster node: ${(c2!.req_s / c1!.req_s).toFixed(2)}x`);
  // autocannon reports whole milliseconds: 0 means under 1 ms.
  const extra = c1!.latency_p99_ms - single!.latency_p99_ms;
  console.log(
    `shared-limit cost at p99 (1 connection): ${extra <= 0 ? 'under 1 ms (1 ms resolution)' : `${extra} ms`}`,
  );
  mkdirSync(join(HERE, 'results'), { recursive: true });
  const file = join(HERE, 'results', `cluster-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify({ cores, connections: CONNECTIONS, duration_s: DURATION_S, rows }, null, 2) + '\n',
  );
  console.log(`written to ${file}`);
}

await main();
