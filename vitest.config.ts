import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // CI also writes a JSON report, from which .ci/run prints a one-line "N passed, N failed" summary.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-output/vitest.json' } : undefined,
    // Coverage of everything the tests run: vitest's forks, and through scripts/coverage-provider.mjs the worker
    // threads (routing, places, static maps, import) and child processes (CLI, `serve` nodes) they start, and the
    // console's bundle in Chromium, each merged into one report: a line counts as covered when any process ran it.
    // Not counted: processes killed with SIGKILL (they write nothing) and copies of the package the install and bundle
    // tests run from a temporary folder.
    coverage: {
      enabled: true,
      provider: 'custom',
      customProviderModule: './scripts/coverage-provider.mjs',
      include: ['src/**/*.{ts,tsx}', 'console/**/*.ts'],
      reporter: ['text-summary', 'json-summary', 'json'],
      reportsDirectory: 'test-output/coverage',
      reportOnFailure: true,
      thresholds: { lines: 90.1, statements: 87.7, functions: 88.7, branches: 78.5 },
    },
  },
});
