/**
 * Tiles benchmark, in one run:
 *   1. seeding throughput: `svcmaps seed` of the Monaco extract, z0-16, built-in renderer (tiles/s);
 *   2. hot-tier hits (X-Tile-Source memory) and warm-tier hits (cache: the LRU is sized below the working set so
 *      every request reads MBTiles) through HTTP with a tile token, each against a bare uWS server sending the same
 *      bytes and headers for the same paths;
 *   3. cold renders per zoom (@2x, what MapLibre asks for) through HTTP on an empty warm tier.
 * Servers run in child processes (autocannon runs here). Results: a table on stdout and bench/results/tiles-<time>.json.
 *
 *   npm run bench:tiles        (BENCH_DURATION_S=5, BENCH_CONNECTIONS=10, BENCH_LRU_MB=4)
 */
import autocannon from 'autocannon';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderImporter } from '../src/import/render-importer.js';
import { MBTiles } from '../src/store/mbtiles.js';
import { SeedArea } from '../src/tiles/seed/area.js';
import { walk } from '../src/tiles/seed/plan.js';
import { ROOT, runCli, startProc, type Proc } from './tiles-proc.js';

const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const DURATION = env('BENCH_DURATION_S', 5);
const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
const LRU_MB = env('BENCH_LRU_MB', 4);
const PBF = join(ROOT, '..', 'shared', 'fixtures', 'monaco.osm.pbf');
const BBOX = '7.349,43.71,7.491,43.77'; // the extract's own bounds
const HOST = '127.0.0.1';

interface Load {
  rps: number;
  p50: number;
  p99: number;
  mbps: number;
  cpuUsPerReq: number;
}

async function load(proc: Proc, paths: string[], label: string): Promise<Load> {
  const port = proc.port;
  const cpu0 = proc.cpuMs();
  const r = await autocannon({
    url: `http://${HOST}:${port}${paths[0]}`,
    requests: paths.map((p) => ({ method: 'GET', path: p })),
    connections: CONNECTIONS,
    duration: DURATION,
    timeout: 10,
  });
  if (r.non2xx || r.errors || r.timeouts)
    throw new Error(`${label}: non2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}`);
  const cpuUsPerReq = ((proc.cpuMs() - cpu0) * 1000) / r.requests.total;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mbps: r.throughput.average / 1e6,
    cpuUsPerReq,
  };
}

async function sources(port: number, paths: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of paths) {
    const r = await fetch(`http://${HOST}:${port}${p}`);
    await r.arrayBuffer();
    const s = r.headers.get('x-tile-source') ?? String(r.status);
    out[s] = (out[s] ?? 0) + 1;
  }
  return out;
}

async function token(app: Proc): Promise<string> {
  const r = await fetch(`http://${HOST}:${app.port}/maps/v1/tile-token`, {
    method: 'POST',
    headers: { 'X-API-Key': app.ready.apiKey! },
  });
  return ((await r.json()) as { data: { token: string } }).data.token;
}

async function main(): Promise<void> {
  console.log(
    `svcmaps tiles bench: node ${process.version}, ${cpus().length} CPUs, ${DURATION} s per load case, ${CONNECTIONS} connections, LRU ${LRU_MB} MB\n`,
  );
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-bench-tiles-'));
  const cold = mkdtempSync(join(tmpdir(), 'svcmaps-bench-cold-'));
  const procs: Proc[] = [];
  try {
    let t = performance.now();
    const imp = await renderImporter.run(PBF, data, () => {}, new AbortController().signal);
    console.log(
      `import monaco.osm.pbf -> render.db: ${((performance.now() - t) / 1000).toFixed(1)} s, ${JSON.stringify(imp.counts)}`,
    );

    // 1. Seeding throughput.
    t = performance.now();
    const seed = JSON.parse(
      await runCli(['seed', '--data', data, '--bbox', BBOX, '--zoom', '0-16', '--concurrency', '2', '--json']),
    ) as {
      seconds: number;
      zooms: Array<{ z: number; written: number; bytes: number }>;
    };
    const written = seed.zooms.reduce((s, z) => s + z.written, 0);
    const seeding = {
      tiles: written,
      seconds: seed.seconds,
      tilesPerSec: written / seed.seconds,
      bytes: seed.zooms.reduce((s, z) => s + z.bytes, 0),
      wallSeconds: (performance.now() - t) / 1000,
    };
    console.log(
      `seed z0-16 @1x: ${written} tiles in ${seed.seconds.toFixed(1)} s = ${seeding.tilesPerSec.toFixed(1)} tiles/s\n`,
    );

    // 2. Hot and warm hits vs bare.
    const area = new SeedArea([SeedArea.parseBbox(BBOX)], []);
    const m = new MBTiles(join(data, 'tiles.mbtiles'), { readonly: true });
    const all = [
      ...walk(
        area,
        Array.from({ length: 17 }, (_, z) => z),
      ),
    ].filter((a) => m.get(a.z, a.x, a.y));
    const warmBytes = all.reduce((s, a) => s + m.get(a.z, a.x, a.y)!.data.length, 0);
    m.close();
    const hotSet = all
      .filter((a) => a.z >= 14)
      .slice(0, 12)
      .map((a) => `/maps/v1/tiles/${a.z}/${a.x}/${a.y}.png`);
    const warmSet = all.map((a) => `/maps/v1/tiles/${a.z}/${a.x}/${a.y}.png`);
    if (warmBytes < LRU_MB * 2 * 1e6)
      throw new Error(`warm set (${(warmBytes / 1e6).toFixed(1)} MB) must be well above the LRU (${LRU_MB} MB)`);

    const app = await startProc('serve-app.ts', [data, String(LRU_MB * 1024 * 1024)]);
    procs.push(app);
    const tok = await token(app);
    const withTok = (ps: string[]) => ps.map((p) => `${p}?t=${tok}`);
    await sources(app.port, withTok(hotSet));
    const hotSources = await sources(app.port, withTok(hotSet));
    // Every header the app sends beyond the tile's own, replayed by the bare server so both responses weigh the same.
    const sample = await fetch(`http://${HOST}:${app.port}${withTok(hotSet)[0]}`);
    await sample.arrayBuffer();
    const own = new Set([
      'date',
      'content-length',
      'uwebsockets',
      'etag',
      'content-type',
      'x-tile-source',
      'cache-control',
      'connection',
      'keep-alive',
    ]);
    const extraHeaders = [...sample.headers].filter(([k]) => !own.has(k));
    const rss0 = app.rssMb();
    const hotApp = await load(app, withTok(hotSet), 'hot app');
    const warmSources = await sources(app.port, withTok(warmSet));
    const warmApp = await load(app, withTok(warmSet), 'warm app');
    const rss1 = app.rssMb();
    // A second pass over the same working set: RSS should stay put (bounded by the LRU), not keep growing.
    await load(app, withTok(warmSet), 'warm app again');
    const rss2 = app.rssMb();
    await app.stop();
    procs.pop();

    const bare = await startProc('tiles-serve-bare.ts', [join(data, 'tiles.mbtiles')], {
      BENCH_EXTRA_HEADERS: JSON.stringify(extraHeaders),
    });
    procs.push(bare);
    const hotBare = await load(bare, withTok(hotSet), 'hot bare');
    const warmBare = await load(bare, withTok(warmSet), 'warm bare');
    await bare.stop();
    procs.pop();

    // 3. Cold renders per zoom on an empty warm tier (render.db only).
    copyFileSync(join(data, 'render.db'), join(cold, 'render.db'));
    const coldApp = await startProc('serve-app.ts', [cold, String(256 * 1024 * 1024)]);
    procs.push(coldApp);
    const ctok = await token(coldApp);
    const coldRows = [];
    // The first tiles of each render thread load fonts and Natural Earth (~1 s): timed apart from the per-zoom rows.
    const get = async (p: string) => {
      const t0 = performance.now();
      await (await fetch(`http://${HOST}:${coldApp.port}/maps/v1/tiles/${p}@2x.png?t=${ctok}`)).arrayBuffer();
      return performance.now() - t0;
    };
    const firstTileMs = Math.max(...(await Promise.all([get('8/200/100'), get('8/201/100')])));
    const firstLowZoomMs = Math.max(...(await Promise.all([get('2/0/0'), get('2/0/1')])));
    // Low zooms over the Riviera around Monaco (the extract alone is one tile there), street zooms over Monaco.
    const riviera = new SeedArea([SeedArea.parseBbox('5.5,42.8,9.5,44.8')], []);
    for (const z of [4, 6, 8, 10, 12, 14, 15, 16]) {
      const addrs = [...walk(z <= 12 ? riviera : area, [z])].slice(0, 16);
      const lat: number[] = [];
      let i = 0;
      const t0 = performance.now();
      const worker = async () => {
        while (i < addrs.length) {
          const a = addrs[i++]!;
          const s = performance.now();
          const r = await fetch(`http://${HOST}:${coldApp.port}/maps/v1/tiles/${a.z}/${a.x}/${a.y}@2x.png?t=${ctok}`);
          await r.arrayBuffer();
          if (r.headers.get('x-tile-source') !== 'fresh')
            throw new Error(`cold z${z}: got ${r.status} ${r.headers.get('x-tile-source')}`);
          lat.push(performance.now() - s);
        }
      };
      await Promise.all([worker(), worker()]);
      const secs = (performance.now() - t0) / 1000;
      lat.sort((a, b) => a - b);
      coldRows.push({
        z,
        tiles: addrs.length,
        tilesPerSec: addrs.length / secs,
        p50: lat[lat.length >> 1]!,
        max: lat[lat.length - 1]!,
      });
    }
    const coldRss = coldApp.rssMb();
    await coldApp.stop();
    procs.pop();

    const rows = [
      [
        'case',
        'app req/s',
        'bare req/s',
        'app/bare',
        'goal',
        'app p50 ms',
        'app p99 ms',
        'app MB/s',
        'app CPU us/req',
        'bare CPU us/req',
      ],
      [
        'hot hits (memory)',
        hotApp.rps.toFixed(0),
        hotBare.rps.toFixed(0),
        pct(hotApp.rps / hotBare.rps),
        '>= 70%',
        String(hotApp.p50),
        String(hotApp.p99),
        hotApp.mbps.toFixed(1),
        hotApp.cpuUsPerReq.toFixed(0),
        hotBare.cpuUsPerReq.toFixed(0),
      ],
      [
        'warm hits (MBTiles)',
        warmApp.rps.toFixed(0),
        warmBare.rps.toFixed(0),
        pct(warmApp.rps / warmBare.rps),
        '>= 50%',
        String(warmApp.p50),
        String(warmApp.p99),
        warmApp.mbps.toFixed(1),
        warmApp.cpuUsPerReq.toFixed(0),
        warmBare.cpuUsPerReq.toFixed(0),
      ],
    ];
    console.log(table(rows));
    console.log(
      `\nbare server replays the app's ${extraHeaders.length} other response headers (${extraHeaders.map(([k]) => k).join(', ')})`,
    );
    console.log(
      `sources before load: hot set ${JSON.stringify(hotSources)}; warm set (${warmSet.length} tiles, ${(warmBytes / 1e6).toFixed(1)} MB) ${JSON.stringify(warmSources)}`,
    );
    console.log(
      `app RSS: ${rss0.toFixed(0)} MB after warm-up, ${rss1.toFixed(0)} MB after ${DURATION} s cycling ${(warmBytes / 1e6).toFixed(1)} MB of tiles through a ${LRU_MB} MB LRU, ${rss2.toFixed(0)} MB after another ${DURATION} s\n`,
    );
    console.log(
      `first tiles of a fresh process (2 render threads in parallel): ${firstTileMs.toFixed(0)} ms (z8: fonts + Natural Earth 10m), then ${firstLowZoomMs.toFixed(0)} ms (z2: 110m + country labels)`,
    );
    console.log(
      table([
        ['cold render @2x', 'tiles', 'tiles/s (2 parallel)', 'p50 ms', 'max ms'],
        ...coldRows.map((r) => [
          `z${r.z}`,
          String(r.tiles),
          r.tilesPerSec.toFixed(1),
          r.p50.toFixed(0),
          r.max.toFixed(0),
        ]),
      ]),
    );
    console.log(
      `cold-render server RSS after these renders (2 render threads, each with its own Natural Earth): ${coldRss.toFixed(0)} MB`,
    );
    console.log(
      `\nseeding (svcmaps seed, Monaco z0-16 @1x, concurrency 2): ${seeding.tiles} tiles, ${seeding.tilesPerSec.toFixed(1)} tiles/s, ${(seeding.bytes / 1e6).toFixed(1)} MB`,
    );

    const goals = { hot: hotApp.rps / hotBare.rps >= 0.7, warm: warmApp.rps / warmBare.rps >= 0.5 };
    console.log(`goals: hot ${goals.hot ? 'met' : 'MISSED'}, warm ${goals.warm ? 'met' : 'MISSED'}`);
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    const file = join(ROOT, 'bench', 'results', `tiles-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          settings: { DURATION, CONNECTIONS, LRU_MB, cpus: cpus().length, node: process.version },
          hot: { app: hotApp, bare: hotBare, sources: hotSources },
          warm: { app: warmApp, bare: warmBare, sources: warmSources, bytes: warmBytes },
          rssMb: { afterWarmup: rss0, afterWarm: rss1, afterWarmAgain: rss2, coldRenderServer: coldRss },
          cold: coldRows,
          firstTileMs,
          firstLowZoomMs,
          seeding,
          goals,
        },
        null,
        2,
      ),
    );
    console.log(`results: ${file}`);
  } finally {
    for (const p of procs) await p.stop().catch(() => undefined);
    rmSync(data, { recursive: true, force: true });
    rmSync(cold, { recursive: true, force: true });
  }
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
function table(rows: string[][]): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map(
      (r, j) =>
        r.map((c, i) => (i ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ') +
        (j === 0 ? '\n' + w.map((x) => '-'.repeat(x)).join('  ') : ''),
    )
    .join('\n');
}

await main();
