// Lint gate: typed typescript-eslint rules (a forgotten promise in a uWS handler is a silent hang) and the layer rule
// from the architecture: each external system is imported from one adapter folder only, and arrows point one way; and
// no error is caught without a trace (eslint-rules/no-silent-catch.js).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import noSilentCatch from './eslint-rules/no-silent-catch.js';

/** External systems and the one folder allowed to import each. */
const ADAPTERS = [
  { name: 'better-sqlite3', home: 'src/store/', what: 'SQLite is reached through src/store/' },
  { name: 'uWebSockets.js', home: 'src/http/uws/', what: 'uWebSockets.js is reached through src/http/uws/' },
  { name: '@napi-rs/canvas', home: 'src/render/', what: 'canvas drawing lives in src/render/' },
  { name: 'ink', home: 'src/cli/ui/', what: 'terminal UI components live in src/cli/ui/' },
  { name: 'pino', home: 'src/ops/', what: 'pino is reached through src/ops/log.ts (code logs via core/log.ts)' },
  { name: 'prom-client', home: 'src/ops/', what: 'Prometheus metrics are declared in src/ops/' },
  // Short names as regexes: a gitignore-style "redis" pattern would also match the adapter's own folder.
  {
    name: 'pg',
    regex: '^pg(/.*)?$',
    home: 'src/store/postgres/',
    what: 'PostgreSQL is reached through src/store/postgres/',
  },
  {
    name: 'redis',
    regex: '^(redis|@redis/.*)(/.*)?$',
    home: 'src/store/redis/',
    what: 'Redis is reached through src/store/redis/',
  },
];

/** Internal folders each layer must not import (cli -> app -> http -> services -> store/cache/core). */
const SERVICES = ['places', 'routing', 'tiles', 'resources', 'auth', 'limits', 'render', 'import', 'cache'];
const FORBIDDEN = {
  core: ['app', 'cli', 'http', 'store', 'config', 'ops', ...SERVICES],
  // Adapters may name the domain's types (a row shape, a feature) but never run domain code.
  store: ['app', 'cli', 'http', 'ops', ...SERVICES.map((s) => ({ dep: s, typesOnly: true }))],
  routing: ['app', 'cli', 'http', 'import'],
  ...Object.fromEntries(SERVICES.filter((s) => s !== 'routing').map((s) => [s, ['app', 'cli', 'http']])),
  http: ['cli'],
  // ops/ (status, self-test, metrics exposition) runs the appliance from outside, like cli/: it may build the app.
  ops: ['cli'],
  config: ['app', 'cli', 'http', 'ops', ...SERVICES],
};

const adapterPatterns = (folder) =>
  ADAPTERS.filter((a) => !folder.startsWith(a.home)).map((a) =>
    a.regex
      ? { regex: a.regex, message: `${a.what} only.` }
      : { group: [a.name, `${a.name}/*`], message: `${a.what} only.` },
  );

// Sibling top-level folders are reached with "../" (or "../../" from a subfolder); "./x" never leaves the folder.
const layerPatterns = (layer) =>
  (FORBIDDEN[layer] ?? []).map((entry) => {
    const { dep, typesOnly } = typeof entry === 'string' ? { dep: entry, typesOnly: false } : entry;
    return {
      // The composition root is src/app.ts and the parts it composes in src/app/.
      regex: dep === 'app' ? '^(\\.\\./)+app(\\.js$|/)' : `^(\\.\\./)+${dep}/`,
      allowTypeImports: typesOnly,
      message: `src/${layer}/ must not ${typesOnly ? 'run code of' : 'depend on'} src/${dep} (the dependency rule in docs/architecture.md).`,
    };
  });

/** One no-restricted-imports rule per source folder (a subfolder's entry replaces its parent's there). */
function importRules() {
  const folders = [
    'app',
    'cli',
    'cli/ui',
    'http',
    'http/uws',
    'store',
    'store/postgres',
    'store/redis',
    'core',
    'config',
    'ops',
    ...SERVICES,
  ];
  const perFolder = folders.map((folder) => ({
    files: [`src/${folder}/**/*.{ts,tsx}`],
    ignores: folders.filter((f) => f.startsWith(`${folder}/`)).map((f) => `src/${f}/**`),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [...adapterPatterns(`src/${folder}/`), ...layerPatterns(folder.split('/')[0])] },
      ],
    },
  }));
  const root = {
    files: ['src/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: adapterPatterns('src/') }] },
  };
  return [...perFolder, root];
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'fonts/', 'test-output/', 'coverage/', '.bundle/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { project: './tsconfig.eslint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Engines implement Promise-returning interfaces with `async` methods that may not await: `async` is what turns
      // a synchronous throw into a rejection the caller handles, so it stays even without an `await`.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // A caught error is rethrown, logged (and counted where it repeats) or passed on; never dropped without a trace.
    // Product code: the server, its scripts and the web console. Tests and benchmarks answer through assertions.
    files: ['src/**/*.{ts,tsx}', 'scripts/**/*.{js,mjs}', 'console/**/*.ts', 'eslint-rules/**/*.js'],
    plugins: { local: { rules: { 'no-silent-catch': noSilentCatch } } },
    rules: { 'local/no-silent-catch': 'error' },
  },
  {
    // Tests and benchmarks read JSON answers as `any` on purpose: their assertions are the type check.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The web console runs in browsers: DOM globals and its own tsconfig (DOM lib, bundler resolution).
    files: ['console/**/*.ts'],
    languageOptions: {
      globals: { ...globals.browser },
      parserOptions: { project: './console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  ...importRules(),
);
