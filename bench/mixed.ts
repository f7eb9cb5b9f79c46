/**
 * Mixed-load benchmark: does engine work stall the HTTP thread? A hot tile is hammered (autocannon, 16 connections)
 * alone, then while ONE client sends routes back to back, then while one client sends autocomplete requests back to
 * back, on a synthetic country (../shared/tools/synth-country.mjs: N copies of the Liechtenstein extract, roads and
 * places imported). Prints hot-tile throughput and p99 against "alone", and the route / search answer times;
 * medians of BENCH_ROUNDS rounds.
 *
 *   npm run build && npm run bench:mixed
 *
 * The server runs the BUILT code (dist/ of BENCH_ROOT, default this repository) in its own process, so a build of
 * another revision can be measured the same way (BENCH_ROOT=/path/to/other/build). The country and its data
 * directory are built once into BENCH_CACHE (default $TMPDIR/svcmaps-bench) and reused: country-<N>.osm.pbf, its
 * .layout.json, data-<N>/.
 *
 * Tunables (environment): BENCH_COPIES (100), BENCH_ROUNDS (3), BENCH_DURATION_S (8, per phase),
 * BENCH_CONNECTIONS (16), BENCH_ROOT, BENCH_CACHE. Results are also written to bench/results/mixed-<timestamp>.json.
 */
import autocannon from 'autocannon';
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { envNum } from './env.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..');
const HOST = '127.0.0.1';

const S = {
  copies: Math.round(envNum('BENCH_COPIES', 100)),
  rounds: Math.round(envNum('BENCH_ROUNDS', 3)),
  durationS: envNum('BENCH_DURATION_S', 8),
  connections: Math.round(envNum('BENCH_CONNECTIONS', 16)),
  root: resolve(process.env.BENCH_ROOT || REPO),
  cache: resolve(process.env.BENCH_CACHE || join(tmpdir(), 'svcmaps-bench')),
};

// ---------------------------------------------------------------------------------------------------------------
// The synthetic country, built once and reused

interface Layout {
  offsets: Array<[number, number]>;
  roadSamples: Array<[number, number]>;
  lon0: number;
  lat0: number;
  W: number;
  H: number;
  cols: number;
  copies: number;
}

function prepareCountry(): { dataDir: string; layout: Layout; layoutFile: string } {
  mkdirSync(S.cache, { recursive: true });
  const pbf = join(S.cache, `country-${S.copies}.osm.pbf`);
  const dataDir = join(S.cache, `data-${S.copies}`);
  const run = (cmd: string, args: string[]) => {
    process.stderr.write(`$ ${cmd} ${args.join(' ')}\n`);
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status})`);
  };
  if (!existsSync(`${pbf}.layout.json`)) {
    const tool = resolve(REPO, '..', 'shared', 'tools', 'synth-country.mjs');
    run(process.execPath, [tool, '--copies', String(S.copies), '--out', pbf]);
  }
  if (!existsSync(join(dataDir, 'roads.graph'))) {
    run(process.execPath, [join(REPO, 'bin', 'svcmaps'), 'import', pbf, '--data', dataDir, '--only', 'roads,places']);
  }
  const layoutFile = `${pbf}.layout.json`;
  return { dataDir, layout: JSON.parse(readFileSync(layoutFile, 'utf8')) as Layout, layoutFile };
}

// ---------------------------------------------------------------------------------------------------------------
// The server: built code, its own process

interface Server {
  port: number;
  apiKey: string;
  pid: number;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Rss (kB) of a process and its threads, from /proc. */
function rssKb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function startServer(dataDir: string): Promise<Server> {
  const dist = (p: string) => JSON.stringify(pathToFileURL(join(S.root, 'dist', p)).href);
  const code = `
    import { createApp } from ${dist('app.js')};
    import { configWith } from ${dist('config/load.js')};
    import { silentLogger } from ${dist('core/log.js')};
    const app = createApp(configWith({ host: '127.0.0.1', port: 0, data_dir: ${JSON.stringify(dataDir)},
      limits: { tile_ip_per_minute: 1000000000 } }), { log: silentLogger });
    const key = app.services.keyAdmin.create({ name: 'bench', plan: 'bench', perMinute: 100000000, daily: 1000000000 });
    const server = await app.listen();
    await app.loaded;
    const stop = () => { app.close(); process.exit(0); };
    process.once('SIGTERM', stop);
    process.stdin.once('end', stop);
    process.stdin.resume();
    process.stdout.write(JSON.stringify({ port: server.port, apiKey: key.key }) + '\\n');
  `;
  // BENCH_SERVER_NODE_ARGS adds node flags to the server alone, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const extra = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, '--input-type=module', '-e', code], {
    cwd: S.root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolveP, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not start within 120 s')), 120_000);
    child.once('exit', (c) => reject(new Error(`server exited early (${c})`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const r = JSON.parse(line) as { port: number; apiKey: string };
      resolveP({
        ...r,
        pid: child.pid!,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
          children.delete(child);
        },
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Load

interface Stream {
  kind: 'routes' | 'autocomplete';
  ms: number[];
  statuses: Record<string, number>;
}

/**
 * One client asking back to back until `stop` resolves, in its own process (bench/stream-child.ts): in this one it
 * would share an event loop with autocannon, and reading its answers would slow the hammer, not the server.
 */
async function stream(server: Server, kind: Stream['kind'], layoutFile: string, seed: number, stop: Promise<void>) {
  const child = fork(
    join(HERE, 'stream-child.ts'),
    [String(server.port), server.apiKey, kind, layoutFile, String(seed)],
    {
      execArgv: ['--import', 'tsx'],
    },
  );
  children.add(child);
  await new Promise((r) => child.once('message', r)); // 'ready'
  await stop;
  const out = await new Promise<Stream>((r) => {
    child.once('message', (m) => r(m as Stream));
    child.send('stop');
  });
  children.delete(child);
  return out;
}

interface TileRun {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function hammer(server: Server, path: string): Promise<TileRun> {
  const r = await autocannon({
    url: `http://${HOST}:${server.port}${path}`,
    connections: S.connections,
    duration: S.durationS,
    timeout: 10,
  });
  return { reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

function tileOf(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const x = Math.floor(((lon + 180) / 360) * n);
  const r = (lat * Math.PI) / 180;
  const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n);
  return [x, y];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[(s.length - 1) >> 1]! : NaN;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};

// ---------------------------------------------------------------------------------------------------------------

interface Round {
  alone: TileRun;
  routes: TileRun & { answers: Stream };
  autocomplete: TileRun & { answers: Stream };
}

async function main() {
  const { dataDir, layout, layoutFile } = prepareCountry();
  // A fresh store each run: routes and searches answered from an earlier run's answer cache would not be computed.
  for (const f of ['svcmaps.db', 'svcmaps.db-wal', 'svcmaps.db-shm']) rmSync(join(dataDir, f), { force: true });
  process.stderr.write(`serving ${join(S.root, 'dist')} over ${dataDir}\n`);
  const server = await startServer(dataDir);
  const rssStart = rssKb(server.pid);
  const tokenRes = await fetch(`http://${HOST}:${server.port}/maps/v1/tile-token`, {
    method: 'POST',
    headers: { 'X-API-Key': server.apiKey },
  });
  const token = ((await tokenRes.json()) as { data: { token: string } }).data.token;
  const [tx, ty] = tileOf(layout.lon0 + (layout.W * layout.cols) / 2, layout.lat0 + layout.H * 2, 7);
  const tilePath = `/maps/v1/tiles/7/${tx}/${ty}.png?t=${token}`;
  // warm: the tile is rendered once and then served from the hot tier; one route and one search start the engines
  // (the first render starts the render threads, which may outlast tiles.timeout_ms on a busy machine: retry)
  for (let attempt = 1; ; attempt++) {
    const warm = await fetch(`http://${HOST}:${server.port}${tilePath}`);
    await warm.arrayBuffer();
    if (warm.status === 200 && !warm.headers.get('x-tile-source')?.startsWith('ancestor')) break;
    if (attempt === 10) throw new Error(`hot tile answered ${warm.status}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  for (const kind of ['routes', 'autocomplete'] as const) {
    let stop!: () => void;
    const s = stream(server, kind, layoutFile, 1, new Promise<void>((r) => (stop = r)));
    setTimeout(stop, 1500);
    await s;
  }

  const rounds: Round[] = [];
  let rssMax = rssKb(server.pid) ?? 0;
  for (let i = 0; i < S.rounds; i++) {
    const alone = await hammer(server, tilePath);
    const withStream = async (kind: Stream['kind']) => {
      let stop!: () => void;
      const answers = stream(server, kind, layoutFile, 100 + i, new Promise<void>((r) => (stop = r)));
      await new Promise((r) => setTimeout(r, 300)); // the stream is under way
      const t = await hammer(server, tilePath);
      stop();
      rssMax = Math.max(rssMax, rssKb(server.pid) ?? 0);
      return { ...t, answers: await answers };
    };
    const routes = await withStream('routes');
    const autocomplete = await withStream('autocomplete');
    rounds.push({ alone, routes, autocomplete });
    process.stderr.write(
      `round ${i + 1}: alone ${Math.round(alone.reqPerSec)} req/s p99 ${alone.p99} ms | routes ${Math.round(routes.reqPerSec)} req/s p99 ${routes.p99} ms (${routes.answers.ms.length} routes, max ${Math.round(Math.max(...routes.answers.ms))} ms) | autocomplete ${Math.round(autocomplete.reqPerSec)} req/s p99 ${autocomplete.p99} ms (${autocomplete.answers.ms.length} searches, max ${Math.round(Math.max(...autocomplete.answers.ms))} ms)\n`,
    );
  }
  await server.stop();

  const med = (f: (r: Round) => number) => median(rounds.map(f));
  const alone = { rps: med((r) => r.alone.reqPerSec), p99: med((r) => r.alone.p99) };
  const col = (k: 'routes' | 'autocomplete') => ({
    rps: med((r) => r[k].reqPerSec),
    p99: med((r) => r[k].p99),
    answersP50: med((r) => pct(r[k].answers.ms, 50)),
    answersP99: med((r) => pct(r[k].answers.ms, 99)),
    answersMax: med((r) => Math.max(...r[k].answers.ms)),
    answers: med((r) => r[k].answers.ms.length),
    statuses: rounds.map((r) => r[k].answers.statuses),
    non2xx: rounds.reduce((s, r) => s + r[k].non2xx, 0),
  });
  const routes = col('routes');
  const auto = col('autocomplete');
  const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const rows = [
    ['hot tile', 'alone', 'with one stream of routes', 'with one stream of autocomplete'],
    [
      'throughput (req/s)',
      f(alone.rps),
      `${f(routes.rps)} (${f(routes.rps / alone.rps, 2)}x)`,
      `${f(auto.rps)} (${f(auto.rps / alone.rps, 2)}x)`,
    ],
    [
      'p99 (ms)',
      f(alone.p99),
      `${f(routes.p99)} (${f(routes.p99 / alone.p99, 1)}x)`,
      `${f(auto.p99)} (${f(auto.p99 / alone.p99, 1)}x)`,
    ],
    ['answers per phase', '', f(routes.answers), f(auto.answers)],
    [
      'answer p50 / p99 / max (ms)',
      '',
      `${f(routes.answersP50)} / ${f(routes.answersP99)} / ${f(routes.answersMax)}`,
      `${f(auto.answersP50)} / ${f(auto.answersP99)} / ${f(auto.answersMax)}`,
    ],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => `| ${r.map((v, c) => v.padEnd(widths[c]!)).join(' | ')} |`;
  const cpu = cpus();
  console.log(
    `\nmixed load, ${S.copies} copies, ${S.connections} connections, ${S.durationS} s per phase, medians of ${S.rounds} rounds; ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}; server ${join(S.root, 'dist')}`,
  );
  console.log(line(rows[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows.slice(1)) console.log(line(r));
  console.log(
    `server RSS: ${f((rssStart ?? 0) / 1024)} MB after start, ${f(rssMax / 1024)} MB peak; route statuses ${JSON.stringify(routes.statuses)}, search statuses ${JSON.stringify(auto.statuses)}`,
  );
  const dir = join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `mixed-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      { settings: S, alone, routes, autocomplete: auto, rssStartKb: rssStart, rssMaxKb: rssMax, rounds },
      null,
      1,
    ),
  );
  console.log(`saved ${file}`);
}

await main();
