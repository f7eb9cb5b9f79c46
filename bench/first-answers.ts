/**
 * The first answers after a start, as a client meets them after a restart: `svcmaps serve` (the built CLI) is spawned
 * and asked at once, without waiting for /readyz. For each data directory (the embedded default; Liechtenstein
 * imported from test/fixtures/osm/; optionally a country with BENCH_PBF=<file.osm.pbf>, or a data directory already
 * imported with BENCH_DATA=<dir>, used in place: its store is removed before each start), quiet and with both cores
 * kept busy by other processes (BENCH_BUSY processes spinning, default the number of cores):
 * - ms from spawn to /livez, to /readyz, and /readyz minus /livez;
 * - 30 autocompletes for capital cities sent together as soon as /livez answers: how many return the city;
 * - (with roads) 150 routes between random road nodes sent 10 at a time as soon as /livez answers: how many are real
 *   routes, genuine 422s, or the degraded straight line.
 * BENCH_ONLY_DATA=1 measures only BENCH_DATA / BENCH_PBF. Runs: BENCH_RUNS (default 3) starts per row; medians of
 * the times, totals of the answers.
 * Results: bench/latest/start.json (see bench/record.ts) and a table on stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { envNum } from './env.js';
import { prng } from './routing-stats.js';
import { recordResult } from './record.js';
import { ROOT } from './tiles-proc.js';

const BIN = join(ROOT, 'bin', 'svcmaps');
const RUNS = envNum('BENCH_RUNS', 3);
const BUSY = envNum('BENCH_BUSY', availableParallelism());

/** Capital cities of the region and beyond, as typed, with what the first prediction must name. */
const CAPITALS: [string, RegExp][] = [
  ['amman', /Amman/],
  ['doha', /Doha/],
  ['riyadh', /Riyadh/],
  ['dubai', /Dubai/],
  ['cairo', /Cairo/],
  ['beirut', /Beirut/],
  ['damascus', /Damascus/],
  ['baghdad', /Baghdad/],
  ['kuwait', /Kuwait/],
  ['muscat', /Muscat/],
  ['manama', /Manama/],
  ['abu dhabi', /Abu Dhabi/],
  ['jerusalem', /Jerusalem/],
  ['ankara', /Ankara/],
  ['tehran', /Tehran/],
  ['tunis', /Tunis/],
  ['algiers', /Algiers/],
  ['rabat', /Rabat/],
  ['khartoum', /Khartoum/],
  ['sanaa', /Sanaa|Sana/],
  ['paris', /Paris/],
  ['london', /London/],
  ['berlin', /Berlin/],
  ['madrid', /Madrid/],
  ['rome', /Rome/],
  ['athens', /Athens/],
  ['nicosia', /Nicosia/],
  ['tripoli', /Tripoli/],
  ['عمان', /Amman|عمان/],
  ['القاهرة', /Cairo|القاهرة/],
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (r.status !== 0) throw new Error(`svcmaps ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** Processes that keep every core busy, as a machine booting its other services does. */
function busy(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn('sh', ['-c', 'exec yes > /dev/null'], { stdio: 'ignore' }));
}

interface Row {
  data: string;
  load: string;
  livezMs: number[];
  readyzMs: number[];
  searches: { asked: number; found: number; expired: number; missed: string[] };
  routes: { asked: number; real: number; unroutable: number; straight: number; other: number };
}

async function until200(base: string, path: string, t0: number): Promise<number> {
  for (;;) {
    try {
      const r = await fetch(base + path);
      await r.arrayBuffer();
      if (r.status === 200) return Math.round(performance.now() - t0);
    } catch (e) {
      // not listening yet (the connection refused): asked again below; anything else is a failure
      if ((e as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') throw e;
    }
    if (performance.now() - t0 > 300_000) throw new Error(`${path} not 200 after 5 min`);
    await sleep(10);
  }
}

/** Road nodes of the imported graph to route between, read with the project's own graph reader. */
async function roadPoints(dataDir: string): Promise<{ lat: number; lng: number }[]> {
  const { loadGraph } = (await import(
    join(ROOT, 'dist', 'routing', 'graph.js')
  )) as typeof import('../src/routing/graph.js');
  const g = loadGraph(join(dataDir, 'roads.graph'));
  const rnd = prng(43);
  return Array.from({ length: 300 }, () => {
    const v = Math.floor(rnd() * g.lat.length);
    return { lat: g.lat[v]!, lng: g.lon[v]! };
  });
}

async function oneStart(
  template: string,
  inPlace: boolean,
  points: { lat: number; lng: number }[] | undefined,
  row: Row,
) {
  // a fresh store each start: an earlier start's answer cache would answer instead of the engines
  const dir = inPlace ? template : mkdtempSync(join(tmpdir(), 'svcmaps-first-'));
  if (inPlace)
    for (const f of ['svcmaps.db', 'svcmaps.db-wal', 'svcmaps.db-shm']) rmSync(join(dir, f), { force: true });
  else cpSync(template, dir, { recursive: true });
  const key = (
    JSON.parse(cli(['keys', 'create', '--data', dir, '--json', '--per-minute', '1000000'])) as { key: string }
  ).key;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--data', dir, '--port', String(port), '--host', '127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'ignore'], // the server's log lines (JSON on stdout) are not read here
  });
  try {
    row.livezMs.push(await until200(base, '/livez', t0));
    const readyz = until200(base, '/readyz', t0);
    const H = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const searches = Promise.all(
      CAPITALS.map(async ([q, want]) => {
        const r = await fetch(`${base}/maps/v1/autocomplete?q=${encodeURIComponent(q)}`, { headers: H });
        const b = (await r.json()) as { data?: { predictions: { name?: string; address?: string }[]; source: string } };
        row.searches.asked++;
        if (b.data?.source === 'budget_expired') row.searches.expired++;
        const top = b.data?.predictions?.[0];
        if (top && want.test(`${top.name ?? ''} ${top.address ?? ''}`)) row.searches.found++;
        else row.searches.missed.push(`${q}: ${b.data?.source} ${top ? `${top.name}, ${top.address}` : 'none'}`);
      }),
    );
    const routes = points
      ? (async () => {
          for (let i = 0; i < 150; i += 10) {
            await Promise.all(
              Array.from({ length: 10 }, async (_, j) => {
                const a = points[(2 * (i + j)) % points.length]!,
                  b = points[(2 * (i + j) + 1) % points.length]!;
                const r = await fetch(`${base}/maps/v1/directions`, {
                  method: 'POST',
                  headers: H,
                  body: JSON.stringify({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng }),
                });
                const d = ((await r.json()) as { data?: { source?: string; partial?: boolean } }).data;
                row.routes.asked++;
                if (r.status === 422) row.routes.unroutable++;
                else if (r.status !== 200) row.routes.other++;
                else if (d?.partial || d?.source === 'server_straight') row.routes.straight++;
                else row.routes.real++;
              }),
            );
          }
        })()
      : Promise.resolve();
    await Promise.all([searches, routes]);
    row.readyzMs.push(await readyz);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    if (!inPlace) rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'svcmaps-first-bench-'));
  process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  const datasets: { name: string; dir: string; inPlace?: boolean; points?: { lat: number; lng: number }[] }[] = [];
  const embedded = join(work, 'embedded');
  mkdirSync(embedded);
  cli(['selftest', '--help']); // the CLI runs at all
  const only = process.env.BENCH_ONLY_DATA === '1'; // just BENCH_DATA / BENCH_PBF
  if (!only) datasets.push({ name: 'embedded default', dir: embedded });
  const imports: [string, string][] = only
    ? []
    : [['Liechtenstein', join(ROOT, 'test/fixtures/osm/liechtenstein-2013-08-03.osm.pbf')]];
  if (process.env.BENCH_PBF) imports.push([process.env.BENCH_PBF, process.env.BENCH_PBF]);
  for (const [name, pbf] of imports) {
    const dir = join(work, name.replace(/\W+/g, '_'));
    mkdirSync(dir);
    process.stderr.write(`importing ${name}...\n`);
    cli(['import', pbf, '--data', dir, '--only', 'roads,places']);
    datasets.push({ name, dir, points: await roadPoints(dir) });
  }
  const given = process.env.BENCH_DATA;
  if (given) datasets.push({ name: given, dir: given, inPlace: true, points: await roadPoints(given) });
  const rows: Row[] = [];
  for (const d of datasets) {
    for (const load of ['quiet', 'busy'] as const) {
      const row: Row = {
        data: d.name,
        load: load === 'busy' ? `busy (${BUSY} spinning)` : 'quiet',
        livezMs: [],
        readyzMs: [],
        searches: { asked: 0, found: 0, expired: 0, missed: [] },
        routes: { asked: 0, real: 0, unroutable: 0, straight: 0, other: 0 },
      };
      for (let i = 0; i < RUNS; i++) {
        const spinners = load === 'busy' ? busy(BUSY) : [];
        try {
          await oneStart(d.dir, !!d.inPlace, d.points, row);
        } finally {
          for (const s of spinners) s.kill('SIGKILL');
        }
        process.stderr.write(`${d.name}, ${load}: run ${i + 1}/${RUNS}\n`);
      }
      rows.push(row);
    }
  }
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  recordResult('start', { runs: RUNS, busySpinners: BUSY, rows });
  for (const r of rows)
    if (r.searches.missed.length) console.log(`${r.data}, ${r.load}: ${r.searches.missed.join('; ')}`);
  console.log(`first answers after a start (${RUNS} starts a row, medians; commit ${git})`);
  console.log(
    '| data | load | /livez ms | /readyz ms | /readyz - /livez | capitals found | routes real / 422 / straight / other |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const gap = median(r.readyzMs.map((v, i) => v - r.livezMs[i]!));
    const s = r.searches;
    const rt = r.routes;
    console.log(
      `| ${r.data} | ${r.load} | ${median(r.livezMs)} | ${median(r.readyzMs)} | ${gap} | ${s.found}/${s.asked}${s.expired ? ` (${s.expired} budget_expired)` : ''} | ${rt.asked ? `${rt.real} / ${rt.unroutable} / ${rt.straight} / ${rt.other} of ${rt.asked}` : '-'} |`,
    );
  }
}

await main();
