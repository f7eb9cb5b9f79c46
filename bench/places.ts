/**
 * bench:places — autocomplete and reverse geocoding on the embedded gazetteer plus the imported Egypt fixture.
 * In one run: import time of the Egypt fixture; in-process engine latency; HTTP latency (sequential, one connection,
 * every request distinct so the answer caches do not help) beside /livez on the same server as the HTTP floor;
 * throughput with autocannon at 8 connections. Queries are English and Arabic names typed character by character.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { ensurePlacesDb } from '../src/places/load.js';
import { PlacesIndex } from '../src/store/places/index-db.js';
import { search } from '../src/places/search.js';
import { reverse } from '../src/places/reverse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(HERE, '..', '..', 'shared', 'fixtures', 'egypt-osm-nodes.geojsonl.gz');
const NAMES: Array<[string, number, number]> = [
  ['Amman', 31.95, 35.91],
  ['Irbid', 32.55, 35.85],
  ['Zarqa', 32.07, 36.09],
  ['Madaba', 31.72, 35.79],
  ['Aqaba', 29.53, 35.0],
  ['Doha', 25.29, 51.53],
  ['Riyadh', 24.69, 46.72],
  ['Jeddah', 21.54, 39.17],
  ['Dubai', 25.2, 55.27],
  ['Sharjah', 25.34, 55.42],
  ['Cairo', 30.04, 31.24],
  ['Giza', 30.01, 31.21],
  ['Alexandria', 31.2, 29.92],
  ['Zamalek', 30.06, 31.22],
  ['Pharmacy', 30.05, 31.24],
  ['عمّان', 31.95, 35.91],
  ['إربد', 32.55, 35.85],
  ['الزرقاء', 32.07, 36.09],
  ['الدوحة', 25.29, 51.53],
  ['الرياض', 24.69, 46.72],
  ['جدة', 21.54, 39.17],
  ['دبي', 25.2, 55.27],
  ['القاهرة', 30.04, 31.24],
  ['الجيزة', 30.01, 31.21],
  ['الإسكندرية', 31.2, 29.92],
  ['صيدلية', 30.05, 31.24],
  ['مستشفى', 30.05, 31.24],
  ['مسجد', 30.05, 31.24],
  ['مدرسة', 31.2, 29.92],
  ['الزمالك', 30.06, 31.22],
];
/** Every prefix of every name, as a user types it. */
const QUERIES = NAMES.flatMap(([n, lat, lng]) =>
  [...n].map((_, i) => ({ q: [...n].slice(0, i + 1).join(''), lat, lng })),
);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms  (n=${xs.length})`;
const randomPoints = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const [, lat, lng] = NAMES[i % NAMES.length]!;
    return { lat: lat + (Math.random() - 0.5) * 0.2, lng: lng + (Math.random() - 0.5) * 0.2 };
  });

async function main() {
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-bench-places-'));
  const child: { p?: ReturnType<typeof spawn> } = {};
  const cleanup = () => {
    child.p?.kill('SIGTERM');
    rmSync(data, { recursive: true, force: true });
  };
  process.once('SIGINT', () => (cleanup(), process.exit(130)));
  try {
    await ensurePlacesDb(data);
    const t0 = performance.now();
    const imp = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(HERE, '..', 'test', 'helpers', 'run-cli.ts'),
        'import',
        FIXTURE,
        '--data',
        data,
        '--only',
        'places',
        '--json',
      ],
      { encoding: 'utf8' },
    );
    if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
    const importS = (performance.now() - t0) / 1000;

    const index = new PlacesIndex(join(data, 'places.db'));
    const inproc: number[] = [];
    for (let round = 0; round < 2; round++) {
      for (const { q, lat, lng } of QUERIES) {
        const t = performance.now();
        search(index, {
          q,
          bias: { lat, lng },
          biasGiven: true,
          country: 'jo',
          locale: /[\u0600-\u06FF]/.test(q) ? 'ar' : 'en',
        });
        if (round === 1) inproc.push(performance.now() - t);
      }
    }
    const revIn: number[] = [];
    for (const p of randomPoints(1000)) {
      const t = performance.now();
      reverse(index, p, 'en');
      revIn.push(performance.now() - t);
    }
    const places = index.count;
    index.close();

    const p = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'serve-app.ts'), data], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    child.p = p;
    const ready = await new Promise<{ port: number; apiKey: string }>((res, rej) => {
      p.stdout.once('data', (d) => res(JSON.parse(String(d))));
      p.once('exit', (c) => rej(new Error(`server exited ${c}`)));
    });
    const base = `http://127.0.0.1:${ready.port}`;
    const H = { 'X-API-Key': ready.apiKey };
    const timed = async (url: string, init?: RequestInit) => {
      const t = performance.now();
      const r = await fetch(url, init);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
      return performance.now() - t;
    };
    for (let i = 0; i < 300; i++) await timed(`${base}/livez`);
    const livez: number[] = [];
    for (let i = 0; i < 1000; i++) livez.push(await timed(`${base}/livez`));
    // Warm the server's code paths (not its caches: these bias points are never measured), then measure each typed
    // prefix at three bias points ~3 km apart, so every measured request is a cache miss.
    for (const { q, lat, lng } of QUERIES)
      await timed(`${base}/maps/v1/autocomplete?q=${encodeURIComponent(q)}&lat=${lat + 1}&lng=${lng + 1}`, {
        headers: H,
      });
    const ac: number[] = [];
    for (const shift of [0, 0.03, 0.06]) {
      for (const { q, lat, lng } of QUERIES) {
        ac.push(
          await timed(`${base}/maps/v1/autocomplete?q=${encodeURIComponent(q)}&lat=${lat + shift}&lng=${lng}`, {
            headers: H,
          }),
        );
      }
    }
    for (const pt of randomPoints(300)) {
      await timed(`${base}/maps/v1/reverse`, {
        method: 'POST',
        headers: { ...H, 'Content-Type': 'application/json' },
        body: JSON.stringify(pt),
      });
    }
    const rev: number[] = [];
    for (const pt of randomPoints(1000)) {
      rev.push(
        await timed(`${base}/maps/v1/reverse`, {
          method: 'POST',
          headers: { ...H, 'Content-Type': 'application/json' },
          body: JSON.stringify(pt),
        }),
      );
    }
    // Throughput: the typed prefixes again (now partly cached, as in real traffic), 8 connections, 8 s.
    const requests = QUERIES.map(({ q, lat, lng }) => ({
      method: 'GET' as const,
      path: `/maps/v1/autocomplete?q=${encodeURIComponent(q)}&lat=${lat}&lng=${lng}&country=eg`,
      headers: H,
    }));
    const tp = await autocannon({ url: base, connections: 8, duration: 8, requests });
    const rows = [
      [
        'import egypt-osm-nodes.geojsonl.gz (CLI, incl. index rebuild)',
        `${importS.toFixed(1)} s (goal < 20 s); index now holds ${places} places`,
      ],
      ['autocomplete, in-process engine', fmt(inproc)],
      ['reverse, in-process engine', fmt(revIn)],
      ['GET /livez over HTTP (floor)', fmt(livez)],
      ['autocomplete over HTTP, distinct prefixes', `${fmt(ac)}  (goal p99 < 10 ms)`],
      ['reverse over HTTP, distinct points', `${fmt(rev)}  (goal p99 < 5 ms)`],
      [
        'autocomplete throughput, 8 connections',
        `${Math.round(tp.requests.average)} req/s, non-2xx ${tp.non2xx}, latency p50 ${tp.latency.p50} ms p99 ${tp.latency.p99} ms`,
      ],
    ];
    for (const [k, v] of rows) console.log(`${k.padEnd(62)} ${v}`);
    mkdirSync(join(HERE, 'results'), { recursive: true });
    writeFileSync(
      join(HERE, 'results', `places-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
      JSON.stringify({ importS, places, inproc, revIn, livez, ac, rev, throughput: tp.requests }, null, 1),
    );
  } finally {
    cleanup();
  }
}

await main();
