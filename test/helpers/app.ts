import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App, type AppOverrides } from '../../src/app.js';
import { configWith } from '../../src/config/load.js';
import { silentLogger } from '../../src/core/log.js';
import type { CreateKeyInput } from '../../src/auth/key-admin.js';
import { emptyPlaces } from '../../src/places/empty.js';
import { ensurePlacesDb } from '../../src/places/load.js';

export interface TestServer {
  url: string;
  app: App;
  dataDir: string;
  /** Creates a key through the same admin service the CLI uses; returns id and the full key. */
  key(input?: Partial<CreateKeyInput>): { id: string; key: string };
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** Starts the real app on port 0 over a fresh temporary data directory (real SQLite, real uWS). */
export async function startServer(
  config: Record<string, unknown> = {},
  overrides: AppOverrides = {},
): Promise<TestServer> {
  const dataDir = (config.data_dir as string) ?? mkdtempSync(join(tmpdir(), 'svcmaps-test-'));
  // Tests get the empty places engine unless they ask for the real one (startPlacesServer): loading the gazetteer
  // index costs a second per server.
  // No routing warm-up unless a test asks for one: it would hold `loaded` for up to 3 s per server.
  const routing = { warm_routes: 0, ...(config.routing as Record<string, unknown> | undefined) };
  // On a machine whose cores other processes keep busy, the niced render threads get a few percent of a core: a
  // first tile can take tens of seconds. Render deadlines a test does not check are set far beyond that; a test about
  // them sets its own.
  const patient = { wait_ms: 120_000 };
  const tiles = { timeout_ms: 120_000, ...(config.tiles as Record<string, unknown> | undefined) };
  const admission = config.admission ?? { interactive: patient, batch: patient, staticmap: patient };
  const app = createApp(configWith({ port: 0, ...config, routing, tiles, admission, data_dir: dataDir }), {
    log: silentLogger,
    meterFlushMs: 50,
    places: emptyPlaces,
    ...overrides,
  });
  const server = await app.listen();
  // Tests route right away: wait for the road graph's background load, unless the test holds it (routingHooks).
  if (!overrides.routingHooks) await app.loaded;
  const url = server.url;
  return {
    url,
    app,
    dataDir,
    key(input = {}) {
      const k = app.services.keyAdmin.create({ plan: 'test', perMinute: 1000, daily: 100_000, ...input });
      return { id: k.id, key: k.key };
    },
    get: (path, headers = {}) => fetch(url + path, { headers }),
    post: (path, body, headers = {}) =>
      fetch(url + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async close() {
      app.close();
      if (!config.data_dir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const SECURITY_HEADERS: Record<string, string> = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains; preload',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

export async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { error?: { code: string }; code?: string };
  return body.error?.code ?? body.code ?? '';
}

/** A server over a data directory holding the real places index (the embedded gazetteer plus any imports). */
export async function startPlacesServer(
  dataDir: string,
  config: Record<string, unknown> = {},
  overrides: AppOverrides = {},
): Promise<TestServer> {
  await ensurePlacesDb(dataDir);
  return startServer({ ...config, data_dir: dataDir }, { ...overrides, places: undefined });
}

/** How many route legs a data directory's SQLite store holds (the answer cache's warm tier; read-only, WAL). */
export function storedRouteLegs(dataDir: string): number {
  const db = new Database(join(dataDir, 'svcmaps.db'), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM answer_cache WHERE key LIKE 'route4:%'`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}
