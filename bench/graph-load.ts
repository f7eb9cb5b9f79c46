/**
 * The road graph's load at start-up (src/routing/build/graph-file.ts readGraphFileShared): chunks read several at a time
 * against one 64 MB read at a time, each load in a fresh process (the memory it reads into is touched for the first
 * time, as at a real start), alternating which goes first. The file comes from the page cache (it was read just
 * before), as after an import or on a warm restart. Prints each way's median and their ratio.
 *
 * Run (built code; `npm run build` first):
 *   npm run bench:graph-load -- --graph <data>/roads.graph [--runs 6]
 * Set GLIBC_TUNABLES=glibc.malloc.hugetlb=1 to measure it as the systemd unit runs the server (huge pages).
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { loadBuilt } from './built.js';

const { values: args } = parseArgs({
  options: {
    graph: { type: 'string' },
    runs: { type: 'string', default: '6' },
    child: { type: 'string' },
  },
});
if (!args.graph) throw new Error('--graph <data>/roads.graph is required');

const WAYS = {
  'one 64 MB read at a time': { chunk: 64 * 2 ** 20, inFlight: 1 },
  'as the server reads it': {},
} as const;
type Way = keyof typeof WAYS;

if (args.child) {
  const { readGraphFileShared } =
    await loadBuilt<typeof import('../src/routing/build/graph-file.js')>('routing/build/graph-file.js');
  const t0 = performance.now();
  await readGraphFileShared(args.graph, WAYS[args.child as Way]);
  process.stdout.write(`${performance.now() - t0}\n`);
} else {
  const once = (way: Way): number => {
    const r = spawnSync(
      process.execPath,
      [...process.execArgv, import.meta.filename, '--graph', args.graph!, '--child', way],
      {
        encoding: 'utf8',
      },
    );
    if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
    return Number(r.stdout.trim());
  };
  const ways = Object.keys(WAYS) as Way[];
  once(ways[1]!); // the file into the page cache
  const ms: Record<Way, number[]> = Object.fromEntries(ways.map((w) => [w, []])) as never;
  for (let i = 0; i < Number(args.runs); i++) for (const w of i % 2 ? [...ways].reverse() : ways) ms[w].push(once(w));
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  for (const w of ways)
    console.log(`${w}: median ${median(ms[w]).toFixed(0)} ms (${ms[w].map((v) => v.toFixed(0)).join(', ')})`);
  console.log(`ratio: ${(median(ms[ways[1]!]) / median(ms[ways[0]!])).toFixed(2)}x`);
}
