/**
 * Routing threads sharing an answer's paths (src/routing/threads/route-help.ts) against each thread writing its own: two
 * pools of routing threads over one loaded graph, one with `share_paths` and one without, asked the same routes one
 * at a time, alternating which goes first per route. Prints p50/p90 per pool, their ratio, and how many answers
 * were the same bytes (all must be).
 *
 * Run (built code; `npm run build` first):
 *   npm run bench:routing-pool -- --graph <data>/roads.graph --layout <country.osm.pbf>.layout.json
 *     [--long 400] [--local 400] [--warm 200] [--threads 2]
 * `--layout` is the layout file synth-country writes (bench/scale.ts): long pairs join copies at least half the
 * country apart, local ones stay inside one copy, 2-5 km apart.
 */
import { parseArgs } from 'node:util';
import type { LatLng } from '../src/core/geo.js';
import type { RouteOptions } from '../src/routing/types.js';
import { loadBuilt } from './built.js';
import { pct, prng } from './routing-stats.js';
import { countryPairs, readLayout } from './synth.js';

const { values: args } = parseArgs({
  options: {
    graph: { type: 'string' },
    layout: { type: 'string' },
    long: { type: 'string', default: '400' },
    local: { type: 'string', default: '400' },
    warm: { type: 'string', default: '200' },
    threads: { type: 'string', default: '2' },
  },
});
if (!args.graph || !args.layout)
  throw new Error('--graph <data>/roads.graph and --layout <pbf>.layout.json are required');

const { loadGraph } = await loadBuilt<typeof import('../src/routing/graph.js')>('routing/graph.js');
const { PooledRouter } = await loadBuilt<typeof import('../src/routing/threads/route-pool.js')>(
  'routing/threads/route-pool.js',
);
const layout = readLayout(args.layout.replace(/\.layout\.json$/, ''));

const pairs = countryPairs(layout, prng(2026));

const graph = loadGraph(args.graph, { shared: true });
const opts = { snapMaxMeters: 1500, threads: Number(args.threads), queue: 64, timeoutMs: 10_000 };
const alone = new PooledRouter(graph, { ...opts, help: false });
const shared = new PooledRouter(graph, { ...opts, help: true });
await Promise.all([alone.whenWarm(), shared.whenWarm()]);
const ask: RouteOptions = { alternatives: 2, locale: 'en', overview: 'simplified' };

for (let i = 0; i < Number(args.warm); i++) {
  const p = i % 2 ? pairs.long() : pairs.local();
  await alone.route(...p, ask);
  await shared.route(...p, ask);
}

async function compare(kind: string, n: number, pair: () => [LatLng, LatLng]): Promise<string> {
  const ms = { alone: [] as number[], shared: [] as number[] };
  let same = 0;
  for (let i = 0; i < n; i++) {
    const p = pair();
    const answers: Buffer[] = [];
    for (const which of i % 2 ? (['alone', 'shared'] as const) : (['shared', 'alone'] as const)) {
      const t0 = performance.now();
      const r = await (which === 'alone' ? alone : shared).route(...p, ask);
      ms[which].push(performance.now() - t0);
      if (r.kind === 'ok' && r.encoded) answers.push(r.encoded);
    }
    if (answers.length === 2 && answers[0]!.equals(answers[1]!)) same++;
  }
  const f = (a: number[]) => `${pct(a, 50).toFixed(2)} / ${pct(a, 90).toFixed(2)}`;
  return (
    `| ${kind} (${n}) | ${f(ms.alone)} | ${f(ms.shared)} | ${(pct(ms.shared, 50) / pct(ms.alone, 50)).toFixed(2)}x ` +
    `| ${same}/${n} |`
  );
}

const rows = [
  await compare('long', Number(args.long), () => pairs.long()),
  await compare('local', Number(args.local), () => pairs.local()),
];
const helped = shared.stats?.helped ?? 0;
alone.close();
shared.close();
console.log(
  `\n| routes, one at a time (${opts.threads} threads) | each writes its own, p50 / p90 ms | sharing paths | p50 ratio ` +
    `| same bytes |\n|---|---|---|---|---|\n${rows.join('\n')}\n\npaths written by another thread: ${helped}\n`,
);
