/**
 * One client of bench:mixed asking back to back (routes, or autocomplete typed letter by letter) until its parent
 * sends 'stop'; then it replies with its answer times and statuses. Run in its own process so that reading the
 * answers does not share an event loop with the load generator.
 *
 *   fork('bench/stream-child.ts', [port, apiKey, 'routes' | 'autocomplete', layoutFile, seed],
 *        { execArgv: ['--import', 'tsx'] })
 */
import { readFileSync } from 'node:fs';
import { KeptAlive } from './raw-get.js';

const [port, apiKey, kind, layoutFile, seedArg] = process.argv.slice(2) as [string, string, string, string, string];
const layout = JSON.parse(readFileSync(layoutFile, 'utf8')) as {
  offsets: Array<[number, number]>;
  roadSamples: Array<[number, number]>;
};

/** Deterministic PRNG (mulberry32), so every run asks the same routes and searches. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'Landstrasse',
  'Hauptstrasse',
  'Kirchstrasse',
  'Bahnhofstrasse',
  'Dorfstrasse',
  'Zollstrasse',
  'Austrasse',
  'Feldkircher',
  'Vaduz',
  'Schaan',
  'Balzers',
  'Triesen',
  'Triesenberg',
  'Eschen',
  'Mauren',
  'Ruggell',
  'Gamprin',
  'Schellenberg',
  'Planken',
  'Nendeln',
];

const out = { kind, ms: [] as number[], statuses: {} as Record<string, number> };
const rand = rng(Number(seedArg));
let done = false;
// One kept-alive connection over a raw socket, as a mobile app or a proxy holds one. fetch() spent ~3 ms of CPU per
// long route reading its answer: on the same two cores as the server that was a third of the stream's CPU.
const conn = new KeptAlive(Number(port));
const point = () => {
  const [dx, dy] = layout.offsets[Math.floor(rand() * layout.offsets.length)]!;
  const [x, y] = layout.roadSamples[Math.floor(rand() * layout.roadSamples.length)]!;
  return { lat: y + dy, lng: x + dx };
};

async function run(): Promise<void> {
  let word = '';
  let typed = 0;
  while (!done) {
    let res: { status: number; ms: number };
    if (kind === 'routes') {
      const a = point(),
        b = point();
      res = await conn.request(
        'POST',
        '/maps/v1/directions',
        { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
        JSON.stringify({ origin_lat: a.lat, origin_lng: a.lng, dest_lat: b.lat, dest_lng: b.lng }),
      );
    } else {
      // typing: each word letter by letter from 2 characters, biased toward a random point of the country
      if (typed === 0 || typed > word.length) {
        word = WORDS[Math.floor(rand() * WORDS.length)]!;
        typed = 2;
      }
      const p = point();
      const q = encodeURIComponent(word.slice(0, typed++));
      res = await conn.get(`/maps/v1/autocomplete?q=${q}&lat=${p.lat.toFixed(4)}&lng=${p.lng.toFixed(4)}`, {
        'X-API-Key': apiKey,
      });
    }
    out.ms.push(res.ms);
    out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
  }
}

const running = run();
process.on('message', (m) => {
  if (m !== 'stop') return;
  done = true;
  void running.then(() => process.send!(out, () => process.exit(0)));
});
process.send!('ready');
