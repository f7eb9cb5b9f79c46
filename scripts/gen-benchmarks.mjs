#!/usr/bin/env node
/**
 * Writes docs/benchmarks.md from the committed latest results (bench/latest/<name>.json, written by each bench
 * through bench/record.ts): how to run every bench, then one table per recorded bench, stamped with its date, commit
 * and machine. Nothing older is kept there; every run's own file stays in bench/results/ on the machine that ran it.
 *
 *   node scripts/gen-benchmarks.mjs           write docs/benchmarks.md
 *   node scripts/gen-benchmarks.mjs --check   exit 1 when docs/benchmarks.md is not what the results make
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'docs/benchmarks.md');

/** Every bench: what it measures against what, and what it needs beyond `npm ci`. */
const BENCHES = [
  [
    'bench:http',
    'HTTP overhead: the app against a bare uWebSockets.js server sending the same bytes (/livez, credentialed JSON, a tile-token asset, a hot tile and its 304)',
    'wrk (Debian package) or autocannon',
  ],
  [
    'bench:overload',
    'Bursts of static maps and cold tiles, every request in flight at once: refusals, /livez and hot-tile latency, event-loop delay, goodput against a same-run baseline',
    '-',
  ],
  [
    'bench:start',
    'The first answers after a start: searches and routes sent as soon as /livez answers, quiet and with busy cores',
    '-',
  ],
  [
    'bench:tiles',
    'Seeding throughput, hot and warm tile hits against a bare server, cold renders per zoom',
    '../shared/fixtures/monaco.osm.pbf',
  ],
  ['bench:routing', 'Import and contraction time, query latency in-process and over HTTP, CH against Dijkstra', '-'],
  ['bench:routing-phases', 'Route answer phases on a large graph', 'a synthetic country'],
  [
    'bench:routing-pool',
    "Routing threads sharing an answer's paths against each writing its own",
    'a synthetic country',
  ],
  ['bench:graph-load', "The road graph's load at start-up, chunked against one read", 'a synthetic country'],
  ['bench:places', 'Autocomplete and reverse geocoding latency, in-process and over HTTP', '-'],
  [
    'bench:mixed',
    'A hot tile hammered while routes or searches run beside it',
    '../shared/tools/synth-country.mjs, osmium-tool',
  ],
  ['bench:cluster', 'One node against two sharing PostgreSQL and Redis', 'postgresql, redis-server'],
  [
    'bench:import',
    'Country-scale import, stage by stage, wall time and peak RSS',
    '../shared/tools/synth-country.mjs, osmium-tool',
  ],
  [
    'bench:scale',
    'Country scale in one table: import, start, serving',
    '../shared/tools/synth-country.mjs, osmium-tool',
  ],
];

const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const fix = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const ms = (n) => (Number.isFinite(n) ? `${Math.round(n)} ms` : '-');
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

/** How each recorded bench's figures read as a table. */
const RENDER = {
  http: {
    title: 'HTTP overhead against bare uWebSockets.js (`npm run bench:http`)',
    body: (f) =>
      `${f.settings.loadgen}, ${f.settings.connections} connections, ${f.settings.rounds} rounds of ${f.settings.durationS} s per case, ` +
      `servers alternated; access log ${f.settings.accessLog ? 'on (written to a file)' : 'off'}; medians.\n\n` +
      table(
        [
          'case',
          'bare req/s',
          'app req/s',
          'app/bare',
          'bare p50 / p99 ms',
          'app p50 / p99 ms',
          'app CPU µs/req (bare)',
        ],
        f.summary.map((s) => [
          s.label,
          int(s.bare.reqPerSec),
          int(s.app.reqPerSec),
          fix(s.ratio),
          `${fix(s.bare.p50Ms)} / ${fix(s.bare.p99Ms)}`,
          `${fix(s.app.p50Ms)} / ${fix(s.app.p99Ms)}`,
          `${fix(s.app.serverCpuUsPerReq, 1)} (${fix(s.bare.serverCpuUsPerReq, 1)})`,
        ]),
      ),
  },
  overload: {
    title: 'Bursts (`npm run bench:overload`)',
    body: (f) =>
      'Embedded default data; every request in flight at once; /livez and a hot tile probed every 25 ms from another ' +
      "process (new connection per probe); event-loop delay from the server's /metrics.\n\n" +
      table(
        [
          'scenario',
          'sent',
          'ok',
          'stand-ins',
          'refused',
          'refusal p95',
          '/livez p99',
          'hot tile p99',
          'loop p99 / max',
          'goodput × baseline',
          'peak RSS',
        ],
        [...f.rows, ...(f.mapsUnderTiles ? [f.mapsUnderTiles] : [])].map((r) => [
          r.scenario.trim(),
          int(r.sent),
          int(r.ok),
          int(r.standIns),
          int(r.refused),
          r.refused ? ms(r.refusalP95Ms) : '-',
          ms(r.livezP99Ms),
          ms(r.hotTileP99Ms),
          Number.isFinite(r.loopP99Ms) ? `${ms(r.loopP99Ms)} / ${ms(r.loopMaxMs)}` : '-',
          r.ratio === undefined ? (r.scenario.startsWith('baseline') ? '1.00' : '-') : fix(r.ratio),
          Number.isFinite(r.peakRssMb) ? `${Math.round(r.peakRssMb)} MB` : '-',
        ]),
      ),
  },
  sizing: {
    title: 'Sizing (`npm run bench:sizing`)',
    body: (f) =>
      'One whole `svcmaps import` per extract into a fresh data directory (default `--memory`), then `svcmaps serve` on it ' +
      "until `/readyz` answers. Peak memory is the import process's high-water mark; disk is the data directory.\n\n" +
      table(
        [
          'extract',
          'PBF',
          'import',
          'import peak memory',
          'disk',
          'serve: /readyz after',
          'serving RSS',
          'load average',
        ],
        f.rows.map((r) => [
          r.extract,
          `${fix(r.pbfMb, 1)} MiB`,
          `${fix(r.importS, 0)} s`,
          `${int(r.importPeakRssMb)} MiB`,
          `${int(r.diskMb)} MiB`,
          `${fix(r.serveReadyS, 1)} s`,
          `${int(r.serveRssMb)} MiB`,
          fix(r.loadAverage[0], 1),
        ]),
      ),
  },
  start: {
    title: 'First answers after a start (`npm run bench:start`)',
    body: (f) =>
      `${f.runs} starts per row, medians; searches and routes sent as soon as /livez answers; busy = ${f.busySpinners} processes spinning.\n\n` +
      table(
        ['data', 'load', '/livez', '/readyz − /livez', 'capitals found', 'real routes'],
        f.rows.map((r) => [
          r.data,
          r.load,
          ms(median(r.livezMs)),
          ms(median(r.readyzMs.map((v, i) => v - r.livezMs[i]))),
          `${r.searches.found}/${r.searches.asked}`,
          r.routes.asked ? `${r.routes.real}/${r.routes.asked}` : '-',
        ]),
      ),
  },
};

function render() {
  const dir = join(ROOT, 'bench/latest');
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  const out = [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run docs:benchmarks` from bench/latest/*.json; edit scripts/gen-benchmarks.mjs, not this file. -->',
    '',
    'Every speed figure of svcmaps comes from one of these benches. Each compares against a baseline measured in the same',
    'run (a bare server, the same machine, alternated rounds) and reports medians, and each writes its figures with the',
    'date, commit and machine to `bench/latest/<name>.json` (committed) and `bench/results/` (every run, kept locally).',
    'This page shows the latest recorded run of each; `npm test` holds no time bound.',
    '',
    '## Running them',
    '',
    'Build first (`npm run build`): the benches measure the compiled code, as `svcmaps serve` runs it.',
    '',
    table(
      ['command', 'what it measures', 'needs'],
      BENCHES.map(([c, what, needs]) => [`\`npm run ${c}\``, what, needs]),
    ),
    '',
    'Benches marked `../shared/...` read the shared fixtures and tools in place beside the repository.',
  ];
  for (const file of files) {
    const r = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const view = RENDER[r.benchmark];
    if (!view) continue;
    const m = r.machine;
    out.push(
      '',
      `## ${view.title}`,
      '',
      `Measured ${r.at.slice(0, 10)} at commit \`${r.commit}\` on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node.replace(/^v/, '')}.`,
      '',
      view.body(r.figures),
    );
  }
  return out.join('\n') + '\n';
}

/** The page as the repository keeps it (formatted by prettier, as the lint gate checks). */
export const page = () => format(render(), { filepath: OUT });

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = await page();
  if (process.argv.includes('--check')) {
    const now = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '';
    if (now !== text) {
      process.stderr.write('docs/benchmarks.md is not what bench/latest/ makes: run `npm run docs:benchmarks`\n');
      process.exit(1);
    }
  } else writeFileSync(OUT, text);
}
