/**
 * HTTP throughput benchmark: the svcmaps app against a bare uWebSockets.js server that answers the same paths with
 * the same status, headers and body bytes, on 127.0.0.1.
 *
 *   npm run bench:http
 *
 * Cases:
 *   1. GET /livez                                  - no credentials (framework cost only)
 *   2. GET /maps/v1/autocomplete?q=%20 + X-API-Key - auth + per-key limit + metering + envelope, no engine work
 *   3. GET /maps/v1/sprites/svc.json?t=<token>     - tile-token auth + per-IP tile cap + metering
 *   4. GET /maps/v1/tiles/3/4/3.png?t=<token>      - a tile in the hot tier: everything above plus the tile lookup,
 *                                                    ETag and a 48 kB body
 *   5. the same with If-None-Match: <its ETag>     - the 304 revalidation a map client sends for a tile it holds
 *
 * Each server runs in its own child process, one at a time, in rounds A B A B A B. After each server start, a
 * warm-up runs every case, then every case is measured on its own. The table reports medians over rounds. Server CPU
 * per request is read from /proc (Linux) as a second, less load-generator-bound view of the same cost.
 *
 * The load generator is wrk (Debian package `wrk`; one thread, 50 connections, as a native client costs the shared
 * cores far less than one written in JavaScript) when it is installed, autocannon otherwise (BENCH_LOADGEN=autocannon
 * forces it). The app writes its production access log (pino, asynchronous, buffered) to a file in the run's temp
 * directory, as `svcmaps serve` writes it to stderr; BENCH_ACCESS_LOG=off measures it with `log.requests: false`.
 *
 * Tunables (environment): BENCH_ROUNDS (3), BENCH_WARMUP_S (2, per server start), BENCH_DURATION_S (7, per case),
 * BENCH_CONNECTIONS (50 with wrk, 10 with autocannon). Results are also written to bench/results/http-<timestamp>.json.
 */
import autocannon from 'autocannon';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BareRoute } from './serve-bare.js';
import type { ReadyLine } from './lifecycle.js';
import { envNum } from './env.js';
import { recordResult } from './record.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const HOST = '127.0.0.1';

const HAVE_WRK = spawnSync('wrk', ['--version']).error === undefined;
const LOADGEN: 'wrk' | 'autocannon' = process.env.BENCH_LOADGEN === 'autocannon' || !HAVE_WRK ? 'autocannon' : 'wrk';
const ACCESS_LOG = process.env.BENCH_ACCESS_LOG !== 'off';

const SETTINGS = {
  loadgen: LOADGEN,
  accessLog: ACCESS_LOG,
  rounds: Math.round(envNum('BENCH_ROUNDS', 3)),
  warmupS: envNum('BENCH_WARMUP_S', 2),
  durationS: envNum('BENCH_DURATION_S', 7),
  connections: Math.round(envNum('BENCH_CONNECTIONS', LOADGEN === 'wrk' ? 50 : 10)),
  pipelining: 1,
};
const GOAL_OVERHEAD = 0.15;

// ---------------------------------------------------------------------------------------------------------------
// Cases

interface Creds {
  apiKey: string;
  token: string;
  /** The hot tile's ETag, for the revalidation case. */
  etag: string;
}

const HOT_TILE = '/maps/v1/tiles/3/4/3.png';

interface Case {
  id: string;
  label: string;
  /** The path the bare server routes on (no query). */
  route: string;
  /** Path + query sent to the app. */
  path(c: Creds): string;
  headers(c: Creds): Record<string, string>;
  /** Counts towards the "under 15%" goal line. */
  goal: boolean;
}

const CASES: Case[] = [
  { id: 'livez', label: '1 GET /livez', route: '/livez', path: () => '/livez', headers: () => ({}), goal: false },
  {
    id: 'autocomplete',
    label: '2 autocomplete q=%20 (X-API-Key)',
    route: '/maps/v1/autocomplete',
    path: () => '/maps/v1/autocomplete?q=%20',
    headers: (c) => ({ 'X-API-Key': c.apiKey }),
    goal: true,
  },
  {
    id: 'sprites',
    label: '3 sprites/svc.json?t=<token>',
    route: '/maps/v1/sprites/svc.json',
    path: (c) => `/maps/v1/sprites/svc.json?t=${c.token}`,
    headers: () => ({}),
    goal: true,
  },
  {
    id: 'tile-hot',
    label: '4 hot tile ?t=<token>',
    route: HOT_TILE,
    path: (c) => `${HOT_TILE}?t=${c.token}`,
    headers: () => ({}),
    goal: true,
  },
  {
    id: 'tile-304',
    label: '5 hot tile, If-None-Match',
    route: HOT_TILE,
    path: (c) => `${HOT_TILE}?t=${c.token}`,
    headers: (c) => ({ 'If-None-Match': c.etag }),
    goal: true,
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Cleanup: child processes and temp dirs go away on success, on errors and on SIGINT/SIGTERM.

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

function cleanupSync(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    process.stderr.write(`\n${sig}: stopping servers and removing temp dirs\n`);
    cleanupSync();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Server processes

interface Server {
  kind: 'app' | 'bare';
  port: number;
  ready: ReadyLine;
  startupMs: number;
  /** CPU time (user + system, all threads) the server process has used so far; undefined without /proc. */
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

/** Linux reports process times in clock ticks; USER_HZ is 100 on every mainstream kernel configuration. */
const TICK_MS = 10;

function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime (fields 14 and 15 of stat)
  } catch {
    return undefined;
  }
}

/** Both servers are started the same way: `node --import tsx bench/<script>`, each in its own process. */
function startServer(kind: 'app' | 'bare', args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, `serve-${kind}.ts`), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  void exited.then(() => children.delete(child));

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<Server>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${kind} server did not report a port within 30 s`));
    }, 30_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${kind} server exited before it was ready (code ${code}, signal ${signal})`));
    });
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      let ready: ReadyLine;
      try {
        ready = JSON.parse(line) as ReadyLine;
      } catch {
        void stop();
        return reject(new Error(`${kind} server printed something other than its ready line: ${line}`));
      }
      child.stdout.resume(); // keep draining in case it prints more
      resolvePromise({
        kind,
        port: ready.port,
        ready,
        startupMs: performance.now() - started,
        cpuMs: () => processCpuMs(child.pid),
        stop,
      });
    });
  });
}

async function startApp(dataRoot: string, n: number): Promise<{ server: Server; creds: Creds }> {
  const dataDir = join(dataRoot, `app-${n}`);
  const server = await startServer(
    'app',
    [dataDir],
    ACCESS_LOG ? { BENCH_LOG: join(dataRoot, `access-${n}.log`) } : { SVCMAPS_LOG__REQUESTS: 'false' },
  );
  const apiKey = server.ready.apiKey;
  if (!apiKey) throw new Error('app server did not report an API key');
  const res = await fetch(`http://${HOST}:${server.port}/maps/v1/tile-token`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey },
  });
  const body = (await res.json()) as { data?: { token?: string } };
  const token = body.data?.token;
  if (res.status !== 200 || !token) throw new Error(`tile-token mint failed: ${res.status} ${JSON.stringify(body)}`);
  // The tile is drawn by the first request; every later one is a hot-tier hit.
  const tile = await fetch(`http://${HOST}:${server.port}${HOT_TILE}?t=${token}`);
  await tile.arrayBuffer();
  const etag = tile.headers.get('etag');
  if (tile.status !== 200 || !etag) throw new Error(`hot tile: ${tile.status}, ETag ${etag}`);
  return { server, creds: { apiKey, token, etag } };
}

// ---------------------------------------------------------------------------------------------------------------
// Raw HTTP capture: one GET over a plain socket, keeping header spelling and order and the exact body bytes.

interface RawResponse {
  statusLine: string; // "200 OK"
  headers: [string, string][];
  body: Buffer;
}

function rawGet(port: number, path: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((res, rej) => {
    const sock = connect(port, HOST);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      rej(new Error(`raw GET ${path}: timed out`));
    }, 5000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      sock.destroy();
      rej(e);
    };
    sock.on('error', fail);
    sock.on('connect', () => {
      const extra = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\n${extra}\r\n`);
    });
    sock.on('data', (d) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = all.subarray(0, end).toString('latin1').split('\r\n');
      const m = /^HTTP\/1\.1 (\d{3} .*)$/.exec(lines[0]!);
      if (!m) return fail(new Error(`raw GET ${path}: bad status line ${JSON.stringify(lines[0])}`));
      const hs = lines.slice(1).map((l): [string, string] => {
        const i = l.indexOf(':');
        return [l.slice(0, i), l.slice(i + 1).trim()];
      });
      const len = Number(hs.find(([k]) => k.toLowerCase() === 'content-length')?.[1] ?? NaN);
      if (!Number.isFinite(len)) return fail(new Error(`raw GET ${path}: no Content-Length`));
      if (all.length < end + 4 + len) return;
      clearTimeout(timer);
      sock.destroy();
      res({ statusLine: m[1]!, headers: hs, body: Buffer.from(all.subarray(end + 4, end + 4 + len)) });
    });
  });
}

/** Headers uWS writes on its own for every response; the bare server must not write them a second time. */
const UWS_OWN = new Set(['date', 'uwebsockets', 'content-length']);

function toBareRoute(route: string, r: RawResponse, ifNoneMatch?: string): BareRoute {
  return {
    path: route,
    ifNoneMatch,
    status: r.statusLine,
    headers: r.headers.filter(([k]) => !UWS_OWN.has(k.toLowerCase())),
    bodyBase64: r.body.toString('base64'),
  };
}

/** Everything but Date must be byte-identical between the app's captured answer and the bare server's. */
function sameBytes(a: RawResponse, b: RawResponse): string | undefined {
  if (a.statusLine !== b.statusLine) return `status ${a.statusLine} vs ${b.statusLine}`;
  const ha = a.headers.filter(([k]) => k.toLowerCase() !== 'date');
  const hb = b.headers.filter(([k]) => k.toLowerCase() !== 'date');
  if (JSON.stringify(ha) !== JSON.stringify(hb)) return `headers ${JSON.stringify(ha)} vs ${JSON.stringify(hb)}`;
  if (!a.body.equals(b.body)) return `body ${a.body.toString()} vs ${b.body.toString()}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Load generation

interface Target {
  path: string;
  headers: Record<string, string>;
}

interface RunResult {
  reqPerSec: number;
  requests: number;
  durationS: number;
  bytesPerResponse: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  autocannonLatencyMs: { p50: number; p99: number };
  /** Server process CPU (all threads) per answered request, and its utilisation of one core. */
  serverCpuUsPerReq?: number;
  serverCpuPct?: number;
  /** This (load-generating) process's CPU, as a share of one core. */
  clientCpuPct: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * One autocannon run over one or more requests (several: each connection cycles through them). Latencies are taken
 * from every response at sub-millisecond resolution (autocannon's own histogram has 1 ms resolution, too coarse on
 * loopback); its p50/p99 are kept in the JSON too. Throws unless every request was answered 200.
 */
async function cannon(server: Server, targets: Target[], durationS: number, what: string): Promise<RunResult> {
  let lat = new Float64Array(1 << 18);
  let n = 0;
  const instance = autocannon({
    url: `http://${HOST}:${server.port}${targets[0]!.path}`,
    headers: targets[0]!.headers,
    ...(targets.length > 1
      ? { requests: targets.map((t) => ({ method: 'GET', path: t.path, headers: t.headers })) }
      : {}),
    connections: SETTINGS.connections,
    pipelining: SETTINGS.pipelining,
    duration: durationS,
    timeout: 5,
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = ms;
  });
  const cpu0 = server.cpuMs();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await instance;
  const wallMs = performance.now() - t0;
  const cpu1 = server.cpuMs();
  const own = process.cpuUsage(own0);

  const sorted = lat.subarray(0, n).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, Number(v.count)]));
  const total = r.requests.total;
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || total === 0 || (statusCodes['200'] ?? 0) !== total) {
    throw new Error(
      `${what}: not every request answered 200 - requests ${total}, non2xx ${r.non2xx}, ` +
        `errors ${r.errors}, timeouts ${r.timeouts}, status codes ${JSON.stringify(statusCodes)}`,
    );
  }
  const serverCpu = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
  return {
    reqPerSec: total / r.duration,
    requests: total,
    durationS: r.duration,
    bytesPerResponse: r.throughput.total / total,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: n ? sorted[n - 1]! : NaN,
      mean: n ? sum / n : NaN,
    },
    autocannonLatencyMs: { p50: r.latency.p50, p99: r.latency.p99 },
    serverCpuUsPerReq: serverCpu === undefined ? undefined : (serverCpu * 1000) / total,
    serverCpuPct: serverCpu === undefined ? undefined : (100 * serverCpu) / wallMs,
    clientCpuPct: (100 * (own.user + own.system)) / 1000 / wallMs,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
  };
}

/** One wrk run on one request, its summary read from bench/wrk-report.lua. Throws unless every answer was 2xx/3xx. */
async function wrk(server: Server, target: Target, durationS: number, what: string): Promise<RunResult> {
  const args = [
    '-t1',
    `-c${SETTINGS.connections}`,
    `-d${durationS}s`,
    '--timeout',
    '5s',
    '-s',
    join(HERE, 'wrk-report.lua'),
    ...Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    `http://${HOST}:${server.port}${target.path}`,
  ];
  const cpu0 = server.cpuMs();
  const t0 = performance.now();
  const out = await new Promise<string>((res, rej) =>
    execFile('wrk', args, (e, stdout, stderr) => (e ? rej(new Error(`${what}: wrk failed: ${stderr}`)) : res(stdout))),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = server.cpuMs();
  const line = out.trim().split('\n').pop()!;
  const w = JSON.parse(line) as Record<string, number>;
  const errors = w.connect! + w.read! + w.write!;
  if (w.requests === 0 || errors > 0 || w.status! > 0 || w.timeout! > 0)
    throw new Error(
      `${what}: wrk saw ${w.requests} requests, ${errors} socket errors, ${w.status} non-2xx/3xx, ${w.timeout} timeouts`,
    );
  const durationSec = w.duration_us! / 1e6;
  const serverCpu = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
  const ms = (us: number) => us / 1000;
  return {
    reqPerSec: w.requests! / durationSec,
    requests: w.requests!,
    durationS: durationSec,
    bytesPerResponse: w.bytes! / w.requests!,
    latencyMs: { p50: ms(w.p50!), p90: ms(w.p90!), p99: ms(w.p99!), max: ms(w.max!), mean: ms(w.mean!) },
    autocannonLatencyMs: { p50: NaN, p99: NaN },
    serverCpuUsPerReq: serverCpu === undefined ? undefined : (serverCpu * 1000) / w.requests!,
    serverCpuPct: serverCpu === undefined ? undefined : (100 * serverCpu) / wallMs,
    clientCpuPct: NaN, // wrk is its own process
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: {},
  };
}

/** One measured run of one request with the configured load generator. */
const load = (server: Server, target: Target, durationS: number, what: string): Promise<RunResult> =>
  LOADGEN === 'wrk' ? wrk(server, target, durationS, what) : cannon(server, [target], durationS, what);

// ---------------------------------------------------------------------------------------------------------------
// Reporting

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => n.toFixed(2);
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const t0 = performance.now();
  const estimate = SETTINGS.rounds * 2 * (SETTINGS.warmupS + CASES.length * SETTINGS.durationS);
  console.log(
    `svcmaps HTTP bench: ${CASES.length} cases x (app, bare) x ${SETTINGS.rounds} rounds; ` +
      `${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}; per server start a ${SETTINGS.warmupS} s ` +
      `warm-up over all cases, then ${SETTINGS.durationS} s measured per case (~${Math.round(estimate)} s of load)`,
  );
  console.log(
    `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), servers in child processes, load here\n`,
  );

  const dataRoot = mkdtempSync(join(tmpdir(), 'svcmaps-bench-'));
  tempDirs.add(dataRoot);

  const runs: Record<string, { app: RunResult[]; bare: RunResult[] }> = Object.fromEntries(
    CASES.map((c) => [c.id, { app: [], bare: [] }]),
  );
  const startups: { app: number[]; bare: number[] } = { app: [], bare: [] };
  let captured: { raw: Map<string, RawResponse>; spec: BareRoute[] } | undefined;
  // The bare server is sent the very same request bytes as the app before it (it ignores the credentials).
  let creds: Creds = { apiKey: '', token: '', etag: '' };

  for (let round = 1; round <= SETTINGS.rounds; round++) {
    for (const kind of ['app', 'bare'] as const) {
      let server: Server;
      if (kind === 'app') {
        const started = await startApp(dataRoot, round);
        server = started.server;
        creds = started.creds;
        if (!captured) {
          // The bare server's answers: exactly what the app answered, captured from the app itself.
          const raw = new Map<string, RawResponse>();
          for (const c of CASES) {
            const r = await rawGet(server.port, c.path(creds), c.headers(creds));
            if (!/^(200|304) /.test(r.statusLine)) {
              throw new Error(`capture ${c.path(creds)}: app answered ${r.statusLine}: ${r.body.toString()}`);
            }
            raw.set(c.id, r);
          }
          captured = {
            raw,
            spec: CASES.map((c) => toBareRoute(c.route, raw.get(c.id)!, c.headers(creds)['If-None-Match'])),
          };
        }
      } else {
        server = await startServer('bare', [], { BENCH_BARE_SPEC: JSON.stringify(captured!.spec) });
        if (round === 1) {
          for (const c of CASES) {
            const diff = sameBytes(
              captured!.raw.get(c.id)!,
              await rawGet(server.port, c.path(creds), c.headers(creds)),
            );
            if (diff) throw new Error(`bare server does not mirror the app for ${c.route}: ${diff}`);
          }
        }
      }
      startups[kind].push(server.startupMs);
      try {
        const targets = CASES.map((c) => ({ path: c.path(creds), headers: c.headers(creds) }));
        // wrk takes whole seconds
        const warmS = Math.max(1, Math.round(SETTINGS.warmupS / targets.length));
        for (const t of targets) await load(server, t, warmS, `round ${round} ${kind} warm-up`);
        for (const [i, c] of CASES.entries()) {
          const what = `round ${round} ${kind} ${c.id}`;
          process.stdout.write(`  ${what.padEnd(28)} `);
          const r = await load(server, targets[i]!, SETTINGS.durationS, what);
          runs[c.id]![kind].push(r);
          const cpu =
            r.serverCpuUsPerReq === undefined
              ? ''
              : `  server ${r.serverCpuUsPerReq.toFixed(0)} us CPU/req (${r.serverCpuPct!.toFixed(0)}%)`;
          const client = Number.isNaN(r.clientCpuPct) ? '' : `  client ${r.clientCpuPct.toFixed(0)}%`;
          console.log(
            `${fmtInt(r.reqPerSec).padStart(7)} req/s  p50 ${fmtMs(r.latencyMs.p50)} ms  p99 ${fmtMs(r.latencyMs.p99)} ms${cpu}${client}`,
          );
        }
      } finally {
        await server.stop();
      }
    }
  }

  // Sanity: the app and the bare server sent the same number of bytes per response (the app's RateLimit-Reset
  // may be one or two digits long, hence the small tolerance).
  for (const c of CASES) {
    const a = median(runs[c.id]!.app.map((r) => r.bytesPerResponse));
    const b = median(runs[c.id]!.bare.map((r) => r.bytesPerResponse));
    if (Math.abs(a - b) > 2)
      throw new Error(
        `${c.id}: app sends ${a.toFixed(1)} B/response, bare ${b.toFixed(1)}; not a like-for-like comparison`,
      );
  }

  const summary = CASES.map((c) => {
    const { app, bare } = runs[c.id]!;
    const appRps = median(app.map((r) => r.reqPerSec));
    const bareRps = median(bare.map((r) => r.reqPerSec));
    const ratio = appRps / bareRps;
    const cpu = (rs: RunResult[]) => {
      const xs = rs.map((r) => r.serverCpuUsPerReq).filter((x): x is number => x !== undefined);
      return xs.length ? median(xs) : undefined;
    };
    return {
      case: c.id,
      label: c.label,
      path: c.route,
      goal: c.goal,
      bare: {
        reqPerSec: bareRps,
        p50Ms: median(bare.map((r) => r.latencyMs.p50)),
        p99Ms: median(bare.map((r) => r.latencyMs.p99)),
        serverCpuUsPerReq: cpu(bare),
        clientCpuPct: median(bare.map((r) => r.clientCpuPct)),
      },
      app: {
        reqPerSec: appRps,
        p50Ms: median(app.map((r) => r.latencyMs.p50)),
        p99Ms: median(app.map((r) => r.latencyMs.p99)),
        serverCpuUsPerReq: cpu(app),
        clientCpuPct: median(app.map((r) => r.clientCpuPct)),
      },
      ratio,
      overhead: 1 - ratio,
    };
  });

  const rows = [
    ['case', 'bare req/s', 'app req/s', 'app/bare', 'overhead', 'bare p50/p99 ms', 'app p50/p99 ms'],
    ...summary.map((s) => [
      s.label,
      fmtInt(s.bare.reqPerSec),
      fmtInt(s.app.reqPerSec),
      s.ratio.toFixed(3),
      pct(s.overhead),
      `${fmtMs(s.bare.p50Ms)} / ${fmtMs(s.bare.p99Ms)}`,
      `${fmtMs(s.app.p50Ms)} / ${fmtMs(s.app.p99Ms)}`,
    ]),
  ];
  const goalCases = summary.filter((s) => s.goal);
  const allUnder = goalCases.every((s) => s.overhead < GOAL_OVERHEAD);
  const verdict =
    `Goal: auth+limits+metering overhead under ${pct(GOAL_OVERHEAD)} vs bare uWS - ` +
    goalCases
      .map(
        (s) =>
          `case ${s.label.split(' ')[0]} (${s.case}) ${pct(s.overhead)} ${s.overhead < GOAL_OVERHEAD ? 'UNDER' : 'OVER'}`,
      )
      .join('; ') +
    ` => ${allUnder ? 'MET' : 'NOT MET'}`;

  const livez = summary.find((s) => s.case === 'livez')!;
  const vsLivez = goalCases.map((s) => `${s.case} ${pct(1 - s.app.reqPerSec / livez.app.reqPerSec)}`).join(', ');

  console.log(
    `\nMedians of ${SETTINGS.rounds} rounds (${SETTINGS.durationS} s measured each), every measured request answered 200:\n`,
  );
  console.log(table(rows));
  const us = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(1));
  if (summary.some((s) => s.app.serverCpuUsPerReq !== undefined)) {
    console.log(`\nServer process CPU per request (user+system, all threads; medians) and load-generator CPU:\n`);
    console.log(
      table([
        ['case', 'bare us/req', 'app us/req', 'app extra us/req', 'client CPU bare/app'],
        ...summary.map((s) => [
          s.label,
          us(s.bare.serverCpuUsPerReq),
          us(s.app.serverCpuUsPerReq),
          s.app.serverCpuUsPerReq !== undefined && s.bare.serverCpuUsPerReq !== undefined
            ? us(s.app.serverCpuUsPerReq - s.bare.serverCpuUsPerReq)
            : 'n/a',
          `${s.bare.clientCpuPct.toFixed(0)}% / ${s.app.clientCpuPct.toFixed(0)}%`,
        ]),
      ]),
    );
  }
  console.log(`\n(for reference, app throughput lost vs the app's own /livez: ${vsLivez})`);
  console.log(verdict);

  const file = recordResult('http', {
    settings: { ...SETTINGS, host: HOST, goalOverhead: GOAL_OVERHEAD },
    startupMs: startups,
    summary,
    goalMet: allUnder,
    verdict,
    runs,
    captured: captured?.spec.map((r) => ({ ...r, body: Buffer.from(r.bodyBase64, 'base64').toString('utf8') })),
    wallSeconds: (performance.now() - t0) / 1000,
  });
  console.log(`\nwrote ${file} (${((performance.now() - t0) / 1000).toFixed(0)} s total)`);
}

main().then(
  () => {
    cleanupSync();
    process.exit(0);
  },
  (e: unknown) => {
    process.stderr.write(`\nbench:http FAILED: ${(e as Error)?.stack ?? String(e)}\n`);
    cleanupSync();
    process.exit(1);
  },
);
