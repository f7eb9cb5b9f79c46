/**
 * Latency probes in their own process: GETs each path given on the command line every 25 ms until the parent sends
 * 'stop', then replies with the latencies in ms, one array per path. Probing from the process that sends a burst
 * would time that process's own event loop, not the server. Each path is probed twice: over a new connection per
 * request (rawGet) and over one kept-alive connection (KeptAlive); the reply holds [new..., kept...] per path.
 *
 *   fork('bench/probe-child.ts', [port, path...], { execArgv: ['--import', 'tsx'] })
 */
import { KeptAlive, rawGet } from './raw-get.js';

const [port, ...paths] = process.argv.slice(2);
let on = true;
const results = [...paths, ...paths].map(() => [] as number[]);
const pause = () => new Promise((r) => setTimeout(r, 25));
const fresh = paths.map(async (path, i) => {
  while (on) {
    results[i]!.push((await rawGet(Number(port), path)).ms);
    await pause();
  }
});
const kept = paths.map(async (path, i) => {
  const conn = new KeptAlive(Number(port));
  while (on) {
    results[paths.length + i]!.push((await conn.get(path)).ms);
    await pause();
  }
  conn.close();
});
const loops = [...fresh, ...kept];
process.on('message', (m) => {
  if (m !== 'stop') return;
  on = false;
  void Promise.all(loops).then(() => process.send!(results, () => process.exit(0)));
});
process.send!('ready');
