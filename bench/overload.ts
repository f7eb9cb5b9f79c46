/**
 * Overload benchmark: what bursts of static maps and cold tiles do to the appliance, on the embedded default (a fresh
 * data directory with the gazetteer and the Natural Earth basemap, no import), every request truly in flight at once
 * (no client-side cap), against one server process started as `npm run serve` would (bench/serve-app.ts).
 *
 *   npm run bench:overload
 *
 * Scenarios, in order, each over areas no earlier request drew:
 *   baseline   static maps 1024x1024, 8 in flight                  -> the goodput every burst is compared with
 *   maps-300   300 static maps at once
 *   maps-600   600 static maps at once
 *   tiles-200  200 cold z14 tiles, sent one second into a burst of 300 static maps
 *   tiles-1000 1,000 cold z14 tiles at once
 * Per scenario: answers by status, goodput (successful answers per second, first request sent to last answer) and its
 * ratio to the baseline, latency of refusals (503/504) p95 and whether each carried Retry-After, the slowest answer,
 * /livez and a hot tile p99 (each probed every 25 ms during the burst, from a separate process, over a new connection
 * per request / over one kept-alive connection), the server's own event-loop delay during the burst (p99 and max of
 * perf_hooks.monitorEventLoopDelay, read from its /metrics: nodejs_eventloop_lag_*, reset at every scrape, so a
 * scrape before and one after each burst bracket it) and the server's peak RSS. Requests go over raw HTTP/1.1
 * sockets (bench/raw-get.ts), one connection each. The closing lines compare each scenario with its goal.
 *
 * Tunables (environment): BENCH_BASELINE_MAPS (32). Results are also written to bench/results/overload-<time>.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fork } from 'node:child_process';
import { createServer } from 'node:net';
import { ensurePlacesDb } from '../src/places/load.js';
import { ROOT, startProc, statusMb, type Proc } from './tiles-proc.js';
import { rawGet, type Answer } from './raw-get.js';
import { recordResult } from './record.js';

const BASELINE_MAPS = Number(process.env.BENCH_BASELINE_MAPS ?? 32);
const REQUEST_TIMEOUT_MS = 30_000;

let port = 0;
let apiKey = '';
let token = '';
let metricsPort = 0;

/** A port free right now, for the server's metrics listener. */
const freePort = () =>
  new Promise<number>((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => res(p));
    });
  });

/** The server's event-loop delay since the previous scrape (prom-client resets it at each one), in ms. */
async function loopDelay(): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

const get = (path: string, headers: Record<string, string> = {}): Promise<Answer> =>
  rawGet(port, path, headers, REQUEST_TIMEOUT_MS + 15_000);

/** A path over an area no other request of this run drew (spread over the globe by a golden-ratio sequence). */
let area = 0;
function freshPath(): string {
  const i = area++;
  const lat = -55 + ((i * 0.618_034 * 125) % 125);
  const lng = -178 + ((i * 0.754_877 * 356) % 356);
  return `${lat.toFixed(4)},${lng.toFixed(4)},${(lat + 0.15).toFixed(4)},${(lng + 0.2).toFixed(4)}`;
}
const mapPath = () => `/maps/v1/staticmap?path=${freshPath()}&w=1024&h=1024`;

/** Cold z14 tiles: a block of addresses no other request of this run asked for. */
let tileRow = 0;
function coldTiles(n: number): string[] {
  const out: string[] = [];
  const row0 = 5000 + tileRow;
  for (let i = 0; i < n; i++)
    out.push(`/maps/v1/tiles/14/${8000 + (i % 100)}/${row0 + Math.floor(i / 100)}.png?t=${token}`);
  tileRow += Math.ceil(n / 100) + 1;
  return out;
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/**
 * Probes /livez and a hot tile every 25 ms from a separate process (bench/probe-child.ts) and samples the server's
 * RSS every 100 ms until stopped.
 */
async function watch(proc: Proc, hotTile: string) {
  const child = fork(join(ROOT, 'bench/probe-child.ts'), [String(port), '/livez', hotTile], {
    execArgv: ['--import', 'tsx'],
  });
  await new Promise((r) => child.once('message', r)); // 'ready'
  await loopDelay(); // starts the window
  let peakRss = proc.rssMb();
  const rss = setInterval(() => (peakRss = Math.max(peakRss, proc.rssMb())), 100);
  return async () => {
    clearInterval(rss);
    const [livez, hot, livezKept, hotKept] = await new Promise<number[][]>((r) => {
      child.once('message', (m) => r(m as number[][]));
      child.send('stop');
    });
    const loop = await loopDelay();
    return {
      loopP99: loop.p99,
      loopMax: loop.max,
      livezP99: pct(livez!, 99),
      hotP99: pct(hot!, 99),
      livezKeptP99: pct(livezKept!, 99),
      hotKeptP99: pct(hotKept!, 99),
      peakRssMb: Math.max(peakRss, proc.rssMb()),
    };
  };
}

interface Row {
  scenario: string;
  sent: number;
  ok: number;
  standIns: number;
  refused: number;
  refusedWithoutRetryAfter: number;
  other: Record<string, number>;
  seconds: number;
  goodput: number;
  ratio?: number;
  refusalP95Ms: number;
  slowestMs: number;
  livezP99Ms: number;
  hotTileP99Ms: number;
  /** The same probes over one kept-alive connection each. */
  livezKeptP99Ms: number;
  hotTileKeptP99Ms: number;
  /** The server's event-loop delay during the scenario (monitorEventLoopDelay, via /metrics). */
  loopP99Ms: number;
  loopMaxMs: number;
  peakRssMb: number;
}

function summarise(
  scenario: string,
  answers: Answer[],
  seconds: number,
  w: Awaited<ReturnType<Awaited<ReturnType<typeof watch>>>>,
): Row {
  const ok = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 503 || a.status === 504);
  const other: Record<string, number> = {};
  for (const a of answers)
    if (a.status !== 200 && a.status !== 503 && a.status !== 504) other[a.status] = (other[a.status] ?? 0) + 1;
  return {
    scenario,
    sent: answers.length,
    ok: ok.length,
    standIns: ok.filter((a) => a.source?.startsWith('ancestor')).length,
    refused: refused.length,
    refusedWithoutRetryAfter: refused.filter((a) => !a.retryAfter).length,
    other,
    seconds,
    goodput: ok.length / seconds,
    refusalP95Ms: pct(
      refused.map((a) => a.ms),
      95,
    ),
    slowestMs: Math.max(...answers.map((a) => a.ms)),
    livezP99Ms: w.livezP99,
    hotTileP99Ms: w.hotP99,
    livezKeptP99Ms: w.livezKeptP99,
    hotTileKeptP99Ms: w.hotKeptP99,
    loopP99Ms: w.loopP99,
    loopMaxMs: w.loopMax,
    peakRssMb: w.peakRssMb,
  };
}

/** Sends every path at once; seconds run from the first request sent to the last answer received. */
async function burst(paths: string[], headers: Record<string, string>) {
  const t0 = performance.now();
  const answers = await Promise.all(paths.map((p) => get(p, headers)));
  return { answers, seconds: (performance.now() - t0) / 1000 };
}

const settle = () => new Promise((r) => setTimeout(r, 3000)); // the server finishes what it admitted

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-overload-'));
  await ensurePlacesDb(dataDir); // the embedded default a fresh `serve` installs
  metricsPort = await freePort();
  const proc = await startProc('serve-app.ts', [dataDir], { SVCMAPS_METRICS__PORT: String(metricsPort) });
  try {
    port = proc.port;
    const base = `http://127.0.0.1:${proc.port}`;
    apiKey = proc.ready.apiKey!;
    const K = { 'X-API-Key': apiKey };
    const minted = await fetch(`${base}/maps/v1/tile-token`, { method: 'POST', headers: K });
    token = ((await minted.json()) as { data: { token: string } }).data.token;
    const hotTile = `/maps/v1/tiles/3/4/3.png?t=${token}`;
    if ((await get(hotTile)).status !== 200) throw new Error('warm-up tile failed');
    // Render threads started and warm: a few maps before the baseline.
    await Promise.all(Array.from({ length: 4 }, () => get(mapPath(), K)));
    const rows: Row[] = [];

    {
      const w = await watch(proc, hotTile);
      const t0 = performance.now();
      const answers: Answer[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next++ < BASELINE_MAPS) answers.push(await get(mapPath(), K));
        }),
      );
      rows.push(summarise('baseline: 8 maps in flight', answers, (performance.now() - t0) / 1000, await w()));
    }
    const baseline = rows[0]!.goodput;
    const run = async (scenario: string, go: () => Promise<{ answers: Answer[]; seconds: number }>, maps = true) => {
      await settle();
      const w = await watch(proc, hotTile);
      const { answers, seconds } = await go();
      const row = summarise(scenario, answers, seconds, await w());
      if (maps) row.ratio = row.goodput / baseline; // tiles per second are not comparable with maps per second
      rows.push(row);
      print(rows.slice(-1));
      return row;
    };
    print(rows);

    await run('300 maps at once', () => burst(Array.from({ length: 300 }, mapPath), K));
    await run('600 maps at once', () => burst(Array.from({ length: 600 }, mapPath), K));
    let mapsUnderTiles: Row | undefined;
    await run(
      '200 cold z14 tiles 1 s into 300 maps',
      async () => {
        const maps = burst(Array.from({ length: 300 }, mapPath), K);
        await new Promise((r) => setTimeout(r, 1000));
        const tiles = await burst(coldTiles(200), {});
        const m = await maps;
        mapsUnderTiles = summarise('  (the 300 maps beside them)', m.answers, m.seconds, {
          loopP99: NaN,
          loopMax: NaN,
          livezP99: NaN,
          hotP99: NaN,
          livezKeptP99: NaN,
          hotKeptP99: NaN,
          peakRssMb: NaN,
        });
        mapsUnderTiles.ratio = mapsUnderTiles.goodput / baseline;
        return tiles;
      },
      false,
    );
    if (mapsUnderTiles) print([mapsUnderTiles]);
    await run('1,000 cold z14 tiles at once', () => burst(coldTiles(1000), {}), false);

    goals(rows);
    const hwm = statusMb(proc.pid, 'VmHWM');
    console.log(`\nserver peak RSS over the whole run (VmHWM): ${hwm.toFixed(0)} MB`);
    console.log(
      `machine: ${cpus()[0]?.model ?? '?'} x${availableParallelism()}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (shared: other work may run beside the benchmark)`,
    );
    const file = recordResult('overload', { rows, mapsUnderTiles, baselineMapsPerS: baseline, peakRssMb: hwm });
    console.log(`results: ${file}`);
  } finally {
    await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

let header = false;
function print(rows: Row[]): void {
  const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  if (!header) {
    header = true;
    console.log(
      [
        'scenario'.padEnd(38),
        'sent'.padStart(5),
        'ok'.padStart(5),
        'stand-in'.padStart(8),
        '503/504'.padStart(8),
        'no R-A'.padStart(6),
        'other'.padStart(8),
        's'.padStart(6),
        'goodput/s'.padStart(9),
        'x base'.padStart(6),
        'refusal p95'.padStart(11),
        'slowest'.padStart(8),
        'livez p99'.padStart(13),
        'hot p99'.padStart(13),
        'loop p99/max'.padStart(13),
        'peak RSS'.padStart(8),
      ].join(' '),
    );
  }
  for (const r of rows)
    console.log(
      [
        r.scenario.padEnd(38),
        String(r.sent).padStart(5),
        String(r.ok).padStart(5),
        String(r.standIns).padStart(8),
        String(r.refused).padStart(8),
        String(r.refusedWithoutRetryAfter).padStart(6),
        (
          Object.entries(r.other)
            .map(([k, v]) => `${k}:${v}`)
            .join(',') || '-'
        ).padStart(8),
        f(r.seconds, 1).padStart(6),
        f(r.goodput, 1).padStart(9),
        (r === rows[0] && r.scenario.startsWith('baseline') ? '1.00' : f(r.ratio ?? NaN, 2)).padStart(6),
        `${f(r.refusalP95Ms)} ms`.padStart(11),
        `${f(r.slowestMs)} ms`.padStart(8),
        `${f(r.livezP99Ms)}/${f(r.livezKeptP99Ms)} ms`.padStart(13),
        `${f(r.hotTileP99Ms)}/${f(r.hotTileKeptP99Ms)} ms`.padStart(13),
        `${f(r.loopP99Ms)}/${f(r.loopMaxMs)} ms`.padStart(13),
        `${f(r.peakRssMb)} MB`.padStart(8),
      ].join(' '),
    );
}

/**
 * The goals a burst is held to on this machine: refusals answered within 250 ms (p95), /livez and a hot tile within
 * 100 ms (p99, new connection per probe), and nine in ten cold tiles sent during a map burst answered 200.
 */
function goals(rows: Row[]): void {
  const find = (prefix: string) => rows.find((r) => r.scenario.startsWith(prefix));
  const lines: [string, boolean][] = [];
  for (const prefix of ['600 maps', '1,000 cold']) {
    const r = find(prefix);
    if (!r) continue;
    const refusals = r.refused === 0 || r.refusalP95Ms <= 250;
    lines.push([
      `${r.scenario}: refusal p95 <= 250 ms (${r.refused ? `${r.refusalP95Ms.toFixed(0)} ms` : 'none refused'})`,
      refusals,
    ]);
    lines.push([`${r.scenario}: /livez p99 <= 100 ms (${r.livezP99Ms.toFixed(0)} ms)`, r.livezP99Ms <= 100]);
    lines.push([`${r.scenario}: hot tile p99 <= 100 ms (${r.hotTileP99Ms.toFixed(0)} ms)`, r.hotTileP99Ms <= 100]);
  }
  const tiles = find('200 cold');
  if (tiles) lines.push([`${tiles.scenario}: >= 180 of 200 answer 200 (${tiles.ok})`, tiles.ok >= 180]);
  console.log('\ngoals:');
  for (const [what, met] of lines) console.log(`  ${met ? 'met    ' : 'NOT MET'} ${what}`);
}

await main();
