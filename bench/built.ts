import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let checked = false;

/**
 * A module of the built app (dist/<path>). Benchmarks measure what `svcmaps serve` runs, so they load the compiled
 * code; a missing build is an error and a build older than the sources a warning on stderr.
 */
export async function loadBuilt<T>(path: string): Promise<T> {
  const file = join(ROOT, 'dist', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` before the benchmark`);
  if (!checked) {
    checked = true;
    const built = statSync(join(ROOT, 'dist', 'app.js')).mtimeMs;
    const newest = (dir: string): number =>
      Math.max(
        0,
        ...readdirSync(dir, { withFileTypes: true }).map((e) =>
          e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
        ),
      );
    if (newest(join(ROOT, 'src')) > built)
      process.stderr.write('bench: src/ changed after the last build; run `npm run build` to measure it\n');
  }
  return (await import(pathToFileURL(file).href)) as T;
}
