/**
 * Latency probes in their own process: GETs each path given on the command line every 25 ms until the parent sends
 * 'stop', then replies with the latencies in ms, one array per path. Probing from the process that sends a burst
 * would time that process's own event loop, not the server.
 *
 *   fork('bench/probe-child.ts', [port, path...], { execArgv: ['--import', 'tsx'] })
 */
import { rawGet } from './raw-get.js';

const [port, ...paths] = process.argv.slice(2);
let on = true;
const results = paths.map(() => [] as number[]);
const loops = paths.map(async (path, i) => {
  while (on) {
    results[i]!.push((await rawGet(Number(port), path)).ms);
    await new Promise((r) => setTimeout(r, 25));
  }
});
process.on('message', (m) => {
  if (m !== 'stop') return;
  on = false;
  void Promise.all(loops).then(() => process.send!(results, () => process.exit(0)));
});
process.send!('ready');
