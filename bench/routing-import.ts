/**
 * One road-graph import in its own process, so its peak RSS (getrusage maxRSS) is the import's alone.
 * usage: routing-import.ts <file.osm.pbf> <data-dir>; prints one JSON line.
 */
import { roadsImporter } from '../src/import/roads-importer.js';

const [file, dir] = process.argv.slice(2);
if (!file || !dir) throw new Error('usage: routing-import.ts <file.osm.pbf> <data-dir>');
const t0 = performance.now();
const s = await roadsImporter.run(file, dir, () => {}, new AbortController().signal);
process.stdout.write(
  JSON.stringify({
    seconds: (performance.now() - t0) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    counts: s.counts,
  }) + '\n',
);
