// Vitest's V8 coverage (@vitest/coverage-v8), widened to the code the tests run in worker threads, child processes and
// Chromium (vitest.config.ts names this module as its coverage provider).
//
// In each of vitest's forks, NODE_V8_COVERAGE is set once the fork runs (not when it starts: the fork's own code is
// measured by vitest through the inspector, and V8 holds one coverage state per thread), so the threads and child
// processes a test starts write their raw coverage to a folder as they end. At the report, those profiles are carried
// over to the code vitest's conversion reads (scripts/coverage-processes.mjs) and merged with the forks' own: a file
// keeps one set of statements, functions and branches, and an item counts as covered when any process ran it. The
// summary, the JSON files and the thresholds all see the merged map.
import v8 from '@vitest/coverage-v8';

/** Where the forks' threads and children write (set by the provider's node side, inherited by the forks). */
const PROCESSES_ENV = 'COVERAGE_PROCESSES_DIR'; // not SVCMAPS_*: the app reads those as its settings

export default {
  ...v8,
  async startCoverage(options) {
    const dir = process.env[PROCESSES_ENV];
    if (!dir) throw new Error(`${PROCESSES_ENV} is not set: the coverage provider's node side did not run`);
    process.env.NODE_V8_COVERAGE = dir;
    return v8.startCoverage(options);
  },
  async getProvider() {
    const base = await v8.getProvider();
    const { widenedProvider } = await import('./coverage-processes.mjs');
    return widenedProvider(base.constructor, PROCESSES_ENV);
  },
};
