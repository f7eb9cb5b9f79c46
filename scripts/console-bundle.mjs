// How the console's script is bundled: one place for scripts/build-console.mjs, which ships it, and for the coverage
// provider (scripts/coverage-processes.mjs), which builds it again with a source map and requires the same bytes.
import { join } from 'node:path';

/** esbuild options for console/main.ts, with `maplibre-gl` left to the module at `maplibrePath` (served beside it). */
export function consoleBundleOptions(root, maplibrePath) {
  return {
    entryPoints: [join(root, 'console', 'main.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [
      {
        name: 'maplibre-external',
        setup(b) {
          b.onResolve({ filter: /^maplibre-gl$/ }, () => ({ path: maplibrePath, external: true }));
        },
      },
    ],
  };
}
