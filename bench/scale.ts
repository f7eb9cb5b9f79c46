/**
 * Country scale, one table. A synthetic country (bench/synth.ts: N copies of the Liechtenstein extract) is imported
 * stage by stage (roads, places, render) into one data directory, each stage in its own process (wall seconds, peak
 * RSS). Then `svcmaps serve` starts on it (ms from spawn to /livez and /readyz, then it stops), and the benchmark's
 * server (bench/serve-app.ts, the same app with a key of its own): ms from spawn until /livez answers 200, until /readyz
 * does ("n/a" while the route does not exist) and until the first real route (not the degraded straight line);
 * server RSS after start and after the routes, beside the size of roads.graph. Then, one request at a time over
 * HTTP, distinct seeded pairs so the route cache never answers: `long` routes between copies at least half the
 * country apart and `local` ones of 2-5 km inside one copy (p50/p90/p99/max; share of long routes with an
 * alternative), then as many long routes again asking `overview: full` (every road point, where the default is the
 * simplified line), and autocomplete as a user types ~200 real place names (every prefix of 3+ characters).
 * Directions always answer with up to two alternatives and maneuvers: the spec has no switch for either.
 *
 *   npm run bench:scale -- [--copies 600] [--memory 4g] [--pbf FILE] [--keep DIR] [--routes 300]
 *     [--compare-env K=V[,K=V]]
 *
 * --pbf FILE needs FILE.layout.json beside it (synth-country writes one). --keep DIR imports into DIR and keeps it;
 * a later run with the same DIR skips each stage whose output is newer than the PBF and shows its earlier figures,
 * marked "kept". Results also go to bench/results/scale-<timestamp>.json. Numbers from a shared machine move with its
 * load: the load average at start and end is printed. --compare-env starts the server a second time with those
 * SVCMAPS_* settings (e.g. SVCMAPS_ROUTING__SPLIT_ALTERNATIVES=false) and prints its routes and searches beside.
 * Both servers run with transparent huge pages, as the systemd unit starts `svcmaps serve` (src/ops/huge-pages.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { haversineMeters, type LatLng } from '../src/core/geo.js';
import { parseSize } from '../src/import/node-index.js';
import { withHugePages } from '../src/ops/huge-pages.js';
import { GRAPH_FILE } from '../src/routing/graph.js';
import { PlacesIndex } from '../src/store/places/index-db.js';
import { PLACES_FILE } from '../src/store/places/schema.js';
import { RENDER_DB } from '../src/store/render/schema.js';
import type { ReadyLine } from './lifecycle.js';
import { KeptAlive } from './raw-get.js';
import { pct, prng } from './routing-stats.js';
import { countryPairs, importStage, readLayout, syntheticCountry, type StageResult } from './synth.js';

const HERE = import.meta.dirname;
const args = process.argv.slice(2);
const opt = (k: string, d: string) => {
  const i = args.indexOf(k);
  return i >= 0 && args[i + 1] ? args[i + 1]! : d;
};
const count = (k: string, d: string) => {
  const n = Number(opt(k, d));
  if (!Number.isInteger(n) || n < 1) die(`${k} must be a positive integer`);
  return n;
};
function die(msg: string): never {
  process.stderr.write(`bench:scale: ${msg}\n`);
  process.exit(1);
}

// Servers start with the environment the systemd unit install.sh writes gives them: malloc's huge pages on (compare
// with --compare-env GLIBC_TUNABLES=glibc.malloc.hugetlb=0).
const serverEnv = withHugePages(process.env);
const copies = count('--copies', '600');
const routesN = count('--routes', '300');
const memory = parseSize(opt('--memory', '4g'));
const keep = opt('--keep', '');
// --compare-env K=V[,K=V]: the server runs a second time with these settings, its routes and searches beside
const compareLabel = opt('--compare-env', '');
const compareEnv = Object.fromEntries(
  compareLabel
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const i = kv.indexOf('=');
      if (i < 1) die('--compare-env takes K=V[,K=V]');
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
);
const pbf = opt('--pbf', '') || syntheticCountry(copies);
if (!existsSync(`${pbf}.layout.json`))
  die(`${pbf}.layout.json is missing (synth-country.mjs writes it beside the PBF)`);
const layout = readLayout(pbf);
if (layout.copies < 2) die('long routes need a country of at least 2 copies');
const load0 = loadavg()[0]!;

// ---------------------------------------------------------------------------------------------------------------
// Import: one process per stage, into one data directory

const STAGES = [
  ['roads', GRAPH_FILE],
  ['places', PLACES_FILE],
  ['render', RENDER_DB],
] as const;
type Stage = StageResult & { kept?: boolean };

const dataDir = keep || mkdtempSync(join(tmpdir(), 'svcmaps-bench-scale-'));
mkdirSync(dataDir, { recursive: true });
const stages: Record<string, Stage> = {};
for (const [stage, output] of STAGES) {
  // The stage's figures are kept beside its output, with the PBF they came from.
  const record = join(dataDir, `bench-scale-${stage}.json`);
  const out = join(dataDir, output);
  const kept =
    keep && existsSync(record) ? (JSON.parse(readFileSync(record, 'utf8')) as Stage & { pbf: string }) : null;
  if (kept?.pbf === pbf && existsSync(out) && statSync(out).mtimeMs > statSync(pbf).mtimeMs) {
    stages[stage] = { ...kept, kept: true };
    continue;
  }
  process.stderr.write(`import ${stage}...\n`);
  const r = importStage(stage, pbf, dataDir, memory);
  if (!r) {
    if (!keep) rmSync(dataDir, { recursive: true, force: true });
    die(`import stage ${stage} failed`);
  }
  writeFileSync(record, JSON.stringify({ ...r, pbf }));
  stages[stage] = r;
  process.stderr.write(`import ${stage}: ${r.seconds.toFixed(1)} s, peak ${r.peakRssMb.toFixed(0)} MB\n`);
}

const graphMb = statSync(join(dataDir, GRAPH_FILE)).size / 2 ** 20;

// ---------------------------------------------------------------------------------------------------------------
// The server: its start, then routes and autocomplete, one request at a time

const rssMb = (pid: number, field = 'VmRSS') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
/** MB of a process's anonymous memory on transparent huge pages. */
const hugeMb = (pid: number) =>
  Number(/AnonHugePages:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
/** The TCP port a process listens on (its one listening socket), from /proc. */
function listeningPort(pid: number): number | undefined {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`))
      inodes.add(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
  } catch {
    return undefined; // not started yet, or an fd closed while listed
  }
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const c = row.trim().split(/\s+/); // sl local_address rem_address st ... inode
      if (c[3] === '0A' && inodes.has(c[9]!)) return parseInt(c[1]!.split(':').pop()!, 16);
    }
  return undefined;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The port a server process started listening on, once it does (it is read from /proc: no key, no announce). */
async function portOf(child: ChildProcess, name: string): Promise<number> {
  for (;;) {
    const port = listeningPort(child.pid!);
    if (port !== undefined) return port;
    if (child.exitCode !== null) throw new Error(`${name} exited early (${child.exitCode})`);
    await sleep(10);
  }
}

/**
 * `since()` once `path` answers 200 ('n/a' on 404, `status N` on another answer that is not 503); a refused
 * connection or a 503 is asked again.
 */
async function until200(port: number, path: string, since: () => number): Promise<number | string> {
  for (;;) {
    const r = await fetch(`http://127.0.0.1:${port}${path}`).catch(() => undefined); // refused until it accepts
    await r?.arrayBuffer();
    if (!r || r.status === 503) await sleep(20);
    else return r.status === 200 ? since() : r.status === 404 ? 'n/a' : `status ${r.status}`;
  }
}

interface DirectionsBody {
  data?: { source?: string; partial?: boolean; routes?: Array<{ maneuvers?: unknown[] }> };
}
type Answer = { ms: number; outcome: string; routes: number; km: number };

async function serve(env: Record<string, string> = {}) {
  // A fresh store each run: with --keep, an earlier run's warm answer cache (SQLite, kept 7 days) would answer the
  // same seeded routes and searches instead of the engines.
  for (const f of ['svcmaps.db', 'svcmaps.db-wal', 'svcmaps.db-shm']) rmSync(join(dataDir, f), { force: true });
  const t0 = performance.now();
  const since = () => Math.round(performance.now() - t0);
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'serve-app.ts'), dataDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...serverEnv, BENCH_ANNOUNCE: 'listening', ...env },
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const announced = new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout }).once('line', res);
    child.once('exit', (code) => rej(new Error(`serve-app exited early (${code})`)));
  });
  announced.catch(() => {}); // awaited below; an early exit also fails the port polling
  try {
    // /livez and /readyz need no key: polled on the port the server listens on, found in /proc. The key for routes
    // and searches comes with serve-app's line, printed as soon as it listens (BENCH_ANNOUNCE=listening), so the
    // first route is tried while the road graph still loads.
    const port = await portOf(child, 'serve-app');
    const start: { livezMs?: number | string; readyzMs?: number | string; firstRouteMs?: number } = {};
    start.livezMs = await until200(port, '/livez', since);
    // /readyz is polled while the first route is tried: a route is real as soon as the road graph is in, which does
    // not wait for the places threads /readyz also waits for.
    const readyz = until200(port, '/readyz', since).then((v) => (start.readyzMs = v));
    child.stdout.resume();
    const { apiKey } = JSON.parse(await announced) as ReadyLine;
    // Timed to the answer's last byte over one kept-alive connection, as a mobile app or a proxy holds one; the
    // answer is parsed after the clock stops (fetch and JSON.parse of a 650 KB answer cost the client ~5 ms).
    const conn = new KeptAlive(port);
    const route = async ([a, b]: [LatLng, LatLng], extra: Record<string, string> = {}): Promise<Answer> => {
      const res = await conn.request(
        'POST',
        '/maps/v1/directions',
        { 'Content-Type': 'application/json', 'X-API-Key': apiKey! },
        JSON.stringify({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng, ...extra }),
        true,
      );
      const ms = res.ms;
      const d = res.body?.length ? (JSON.parse(res.body.toString('utf8')) as DirectionsBody).data : undefined;
      const km = haversineMeters(a, b) / 1000;
      if (res.status !== 200) return { ms, outcome: `status ${res.status}`, routes: 0, km };
      const degraded = d?.partial || d?.source === 'server_straight';
      return { ms, outcome: degraded ? 'degraded' : 'route', routes: d?.routes?.length ?? 0, km };
    };

    const rnd = prng(2026);
    const p = countryPairs(layout, rnd);
    for (let first = p.long(); ;) {
      const a = await route(first);
      if (a.outcome === 'route') break;
      if (a.outcome === 'status 422') first = p.long(); // unroutable: another pair
      if (since() > 600_000) throw new Error(`no real route 10 min after start (last: ${a.outcome})`);
      await sleep(20);
    }
    start.firstRouteMs = since();
    await readyz;
    const rssStartMb = rssMb(child.pid!); // everything loaded, nothing asked yet but the first route

    // warm-up, not measured
    for (let i = 0; i < 10; i++) {
      await route(p.local());
      await route(p.long());
    }
    const long: Answer[] = [];
    const local: Answer[] = [];
    const longFull: Answer[] = [];
    process.stderr.write(`routes: ${routesN} long, ${routesN} local, ${routesN} long with the full line...\n`);
    for (let i = 0; i < routesN; i++) long.push(await route(p.long()));
    for (let i = 0; i < routesN; i++) local.push(await route(p.local()));
    for (let i = 0; i < routesN; i++) longFull.push(await route(p.long(), { overview: 'full' }));
    const rssRoutesMb = rssMb(child.pid!);
    const hugePagesMb = hugeMb(child.pid!);

    // Autocomplete: ~200 place names of this import (not the embedded gazetteer), typed prefix by prefix.
    const index = new PlacesIndex(join(dataDir, PLACES_FILE));
    const names = new Map<string, LatLng>();
    for (let tries = 0; names.size < 200 && tries < 50; tries++) {
      const ids = Array.from({ length: 200 }, () => 1 + Math.floor(rnd() * index.count));
      for (const r of index.byIds(ids))
        if (r.source.startsWith('osm:') && [...r.name].length >= 3 && names.size < 200) names.set(r.name, r);
    }
    index.close();
    process.stderr.write(`autocomplete: ${names.size} names...\n`);
    const typed: number[] = [];
    let empty = 0,
      failed = 0;
    for (const [name, at] of names) {
      const chars = [...name];
      for (let n = 3; n <= chars.length; n++) {
        const q = encodeURIComponent(chars.slice(0, n).join(''));
        const res = await conn.request(
          'GET',
          `/maps/v1/autocomplete?q=${q}&lat=${(at.lat + 0.02).toFixed(5)}&lng=${at.lng}`,
          { 'X-API-Key': apiKey! },
          undefined,
          true,
        );
        const j = JSON.parse(res.body?.toString('utf8') || '{}') as { data?: { predictions?: unknown[] } };
        typed.push(res.ms);
        if (res.status !== 200) failed++;
        else if (!j.data?.predictions?.length && empty++ < 5)
          process.stderr.write(`autocomplete: no prediction for "${decodeURIComponent(q)}" (typing "${name}")\n`);
      }
    }
    return {
      start,
      rssStartMb,
      rssRoutesMb,
      rssEndMb: rssMb(child.pid!),
      rssPeakMb: rssMb(child.pid!, 'VmHWM'),
      hugePagesMb,
      long,
      local,
      longFull,
      autocomplete: { names: names.size, ms: typed, empty, failed },
    };
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * `svcmaps serve` itself on the data directory, as an operator starts it (compiled code; the benchmark's server
 * above starts through the tsx loader, which adds a few hundred ms before it listens): ms from spawn to /livez and
 * to /readyz. A fresh store, and the server is gone before the next one takes the data directory's lock.
 */
async function cliStart(): Promise<{ livezMs: number | string; readyzMs: number | string }> {
  for (const f of ['svcmaps.db', 'svcmaps.db-wal', 'svcmaps.db-shm']) rmSync(join(dataDir, f), { force: true });
  const t0 = performance.now();
  const since = () => Math.round(performance.now() - t0);
  const bin = join(HERE, '..', 'bin', 'svcmaps');
  const child = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', '0'], {
    stdio: 'ignore',
    env: serverEnv,
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const port = await portOf(child, 'svcmaps serve');
    return { livezMs: await until200(port, '/livez', since), readyzMs: await until200(port, '/readyz', since) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

let server: Awaited<ReturnType<typeof serve>>;
let baseline: Awaited<ReturnType<typeof serve>> | undefined;
let cli: Awaited<ReturnType<typeof cliStart>>;
try {
  process.stderr.write('svcmaps serve: start...\n');
  cli = await cliStart();
  server = await serve();
  if (Object.keys(compareEnv).length) {
    process.stderr.write(`again with ${compareLabel}...\n`);
    baseline = await serve(compareEnv);
  }
} finally {
  if (!keep) rmSync(dataDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------------
// The table

/** A start-up time as printed: ms, or why there is none ('n/a', `status N`). */
const startMs = (v: number | string | undefined) => (typeof v === 'number' ? `${v} ms` : (v ?? '-'));
const f = (n: number | undefined, d = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '-');
const stats = (a: Answer[]) => {
  const ms = a.map((x) => x.ms);
  const outcomes: Record<string, number> = {};
  for (const x of a) outcomes[x.outcome] = (outcomes[x.outcome] ?? 0) + 1;
  const real = a.filter((x) => x.outcome === 'route');
  return {
    p50: pct(ms, 50),
    p90: pct(ms, 90),
    p99: pct(ms, 99),
    max: Math.max(...ms),
    medianKm: pct(
      a.map((x) => x.km),
      50,
    ),
    outcomes,
    altShare: real.filter((x) => x.routes > 1).length / real.length,
  };
};
/** The serving figures of one run of the server. */
const figures = (s: typeof server) => ({
  long: stats(s.long),
  local: stats(s.local),
  longFull: stats(s.longFull),
  ac: { p50: pct(s.autocomplete.ms, 50), p99: pct(s.autocomplete.ms, 99) },
});
const main = figures(server),
  compared = baseline && figures(baseline);
const servingRows = (
  s: typeof server,
  { long, local, longFull, ac }: ReturnType<typeof figures>,
  tag: string,
): Array<[string, string]> => {
  const longRow = (what: string, n: number, x: typeof long): [string, string] => [
    `${what}${tag} (${n}, median ${f(x.medianKm)} km apart): p50 / p90 / p99 / max`,
    `${f(x.p50, 1)} / ${f(x.p90, 1)} / ${f(x.p99, 1)} / ${f(x.max, 1)} ms; ${f(x.altShare * 100)}% with an alternative; ${outcomes(x.outcomes)}`,
  ];
  return [
    longRow('long routes', s.long.length, long),
    longRow('long routes, overview full', s.longFull.length, longFull),
    [
      `local routes${tag} (${s.local.length}, median ${f(local.medianKm, 1)} km apart): p50 / p90 / p99 / max`,
      `${f(local.p50, 2)} / ${f(local.p90, 2)} / ${f(local.p99, 1)} / ${f(local.max, 1)} ms; ${outcomes(local.outcomes)}`,
    ],
    [
      `autocomplete${tag} (${s.autocomplete.ms.length} prefixes of ${s.autocomplete.names} names): p50 / p99`,
      `${f(ac.p50, 1)} / ${f(ac.p99, 1)} ms; ${s.autocomplete.empty} empty, ${s.autocomplete.failed} failed`,
    ],
  ];
};
const load1 = loadavg()[0]!;
const sum = (o: Record<string, number> | undefined) => Object.values(o ?? {}).reduce((s, n) => s + n, 0);
const roads = stages.roads!.counts;
const total = Object.values(stages);
const outcomes = (o: Record<string, number>) =>
  Object.entries(o)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');

const rows: Array<[string, string]> = [
  ['copies', `${layout.copies} (${pbf})`],
  [
    'imported',
    `${f(roads.nodes)} routing nodes, ${f(roads.edges)} edges, ${f(roads.ways)} drivable ways; ${f(sum(stages.places!.counts))} places; ${f(sum(stages.render!.counts))} render features`,
  ],
  ...STAGES.map(([s]): [string, string] => [
    `import ${s}`,
    `${f(stages[s]!.seconds, 1)} s, peak RSS ${f(stages[s]!.peakRssMb)} MB${stages[s]!.kept ? ' (kept)' : ''}`,
  ]),
  [
    'import total',
    `${f(
      total.reduce((s, x) => s + x.seconds, 0),
      1,
    )} s, largest peak RSS ${f(Math.max(...total.map((x) => x.peakRssMb)))} MB`,
  ],
  ['`svcmaps serve` start: /livez, /readyz', [cli.livezMs, cli.readyzMs].map(startMs).join(', ')],
  [
    'start (benchmark server): /livez, /readyz, first route',
    [server.start.livezMs, server.start.readyzMs, server.start.firstRouteMs].map(startMs).join(', '),
  ],
  [
    'server RSS after start / after routes / peak, roads.graph',
    `${f(server.rssStartMb)} / ${f(server.rssRoutesMb)} / ${f(server.rssPeakMb)} MB, ${f(graphMb)} MB (${f(server.rssStartMb / graphMb, 2)}x / ${f(server.rssRoutesMb / graphMb, 2)}x); ${f(server.hugePagesMb)} MB on huge pages`,
  ],
  ...servingRows(server, main, ''),
  ...(baseline && compared ? servingRows(baseline, compared, ` with ${compareLabel}`) : []),
  ['load average at start / end', `${f(load0, 1)} / ${f(load1, 1)} (${availableParallelism()} cores)`],
];
process.stdout.write(
  `\n| country scale | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join('\n')}\n\n--memory ${opt('--memory', '4g')}, data ${keep || '(temporary)'}\n`,
);

const dir = join(HERE, 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      settings: { copies: layout.copies, pbf, memory, keep: keep || undefined, routes: routesN },
      loadavg: { start: load0, end: load1 },
      stages,
      start: server.start,
      cliStart: cli,
      rssMb: { start: server.rssStartMb, routes: server.rssRoutesMb, end: server.rssEndMb, peak: server.rssPeakMb },
      hugePagesMb: server.hugePagesMb,
      graphMb,
      long: main.long,
      local: main.local,
      longFull: main.longFull,
      autocomplete: { ...main.ac, names: server.autocomplete.names, prefixes: server.autocomplete.ms.length },
      ...(compared
        ? {
            compare: {
              env: compareEnv,
              long: compared.long,
              local: compared.local,
              longFull: compared.longFull,
              autocomplete: compared.ac,
            },
          }
        : {}),
    },
    null,
    1,
  ),
);
process.stdout.write(`saved ${file}\n`);
