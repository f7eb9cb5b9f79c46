import { existsSync, readdirSync, statSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';
import { openDb } from '../store/db.js';
import { STORE_FILE } from '../store/data-dir.js';
import { MBTiles } from '../store/mbtiles.js';
import { PLACES_FILE } from '../store/places/schema.js';
import { nearTokensVersion } from '../store/places/index-db.js';
import { GRAPH_FILE } from '../routing/graph.js';
import { readGraphHeader } from '../routing/build/graph-file.js';
import { RenderStore } from '../store/render/reader.js';
import { mbtilesName, type Scale } from '../tiles/warm-store.js';
import { processAlive, readPidFile } from './pidfile.js';

interface SourceRow {
  source: string;
  imported_at: string;
  rows: number;
  file: string | null;
}

export interface StatusReport {
  data_dir: string;
  exists: boolean;
  store: { bytes: number; keys: number; active_keys: number } | null;
  /** `near_tokens`: the index holds autocomplete's near tokens (files imported before them search nearby slower). */
  places: { bytes: number; places: number; sources: SourceRow[]; near_tokens: boolean } | null;
  /** `search_blocks`: the file holds the CH search blocks (older files get them made at every start). */
  roads: {
    bytes: number;
    modified: string;
    nodes?: number;
    edges?: number;
    source?: string;
    built_at?: string;
    search_blocks?: boolean;
    /** Why the graph's header could not be read (it is then described by its size alone). */
    unreadable?: string;
  } | null;
  render: { bytes: number; meta: Record<string, string> } | null;
  tiles: Array<{
    file: string;
    scale: Scale;
    bytes: number;
    zooms: Array<{ z: number; tiles: number; bytes: number }>;
  }>;
  disk: { used_bytes: number; free_bytes: number | null };
  server: {
    url: string;
    up: boolean;
    pid?: number;
    pid_alive?: boolean;
    health?: { postgres?: string; redis?: string; svc_wired?: boolean };
    error?: string;
  };
}

const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);

/** Everything in the directory, recursively (files beside the databases: WAL, secrets, photos). */
function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/** The road graph header only, so a multi-gigabyte graph is not read to describe it. */
function graphHeader(file: string): {
  meta: { nodes?: number; edges?: number; source?: string; builtAt?: string };
  sections?: string[];
  unreadable?: string;
} {
  try {
    return readGraphHeader(file) ?? { meta: {} };
  } catch (e) {
    return { meta: {}, unreadable: (e as Error).message }; // described by its size, and why no more
  }
}

function withDb<T>(file: string, fn: (db: ReturnType<typeof openDb>) => T): T | null {
  if (!existsSync(file)) return null;
  const db = openDb(file, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

export function inspectDataDir(root: string): Omit<StatusReport, 'server'> {
  if (!existsSync(root)) {
    return {
      data_dir: root,
      exists: false,
      store: null,
      places: null,
      roads: null,
      render: null,
      tiles: [],
      disk: { used_bytes: 0, free_bytes: null },
    };
  }
  const storeFile = join(root, STORE_FILE);
  const store = withDb(storeFile, (db) => {
    const r = db.prepare('SELECT COUNT(*) AS keys, COALESCE(SUM(active), 0) AS active FROM api_keys').get() as {
      keys: number;
      active: number;
    };
    return { bytes: size(storeFile) + size(`${storeFile}-wal`), keys: r.keys, active_keys: r.active };
  });
  const placesFile = join(root, PLACES_FILE);
  const places = withDb(placesFile, (db) => ({
    bytes: size(placesFile),
    places: (db.prepare('SELECT COUNT(*) AS n FROM places').get() as { n: number }).n,
    sources: db
      .prepare('SELECT source, imported_at, rows, file FROM sources ORDER BY imported_at')
      .all() as SourceRow[],
    near_tokens: nearTokensVersion(db) > 0,
  }));
  const graphFile = join(root, GRAPH_FILE);
  const roads = existsSync(graphFile)
    ? (() => {
        const { meta: h, sections, unreadable } = graphHeader(graphFile);
        return {
          bytes: size(graphFile),
          modified: statSync(graphFile).mtime.toISOString(),
          nodes: h.nodes,
          edges: h.edges,
          source: h.source,
          built_at: h.builtAt,
          ...(sections ? { search_blocks: sections.includes('chAdj') } : {}),
          ...(unreadable ? { unreadable } : {}),
        };
      })()
    : null;
  const rs = RenderStore.inDataDir(root);
  const render = rs.available ? { bytes: size(rs.file), meta: rs.meta() } : null;
  rs.close();
  const tiles = ([1, 2, 3] as Scale[])
    .map((scale) => ({ scale, file: join(root, mbtilesName(scale)) }))
    .filter((t) => existsSync(t.file))
    .map((t) => {
      const m = new MBTiles(t.file, { readonly: true });
      try {
        return { ...t, bytes: size(t.file) + size(`${t.file}-wal`), zooms: m.countsByZoom() };
      } finally {
        m.close();
      }
    });
  let free: number | null = null;
  try {
    const fs = statfsSync(root);
    free = fs.bavail * fs.bsize;
  } catch (e) {
    if (!isErrno(e, 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP')) throw e; // not every filesystem answers
  }
  return {
    data_dir: root,
    exists: true,
    store,
    places,
    roads,
    render,
    tiles,
    disk: { used_bytes: dirBytes(root), free_bytes: free },
  };
}

/** Whether a server answers at `url` (its /healthz), and what the data directory's pid file says. */
export async function probeServer(url: string, root: string, timeoutMs = 2000): Promise<StatusReport['server']> {
  const pidInfo = existsSync(root) ? readPidFile(root) : undefined;
  const pid = pidInfo ? { pid: pidInfo.pid, pid_alive: processAlive(pidInfo.pid) } : {};
  try {
    const res = await fetch(`${url.replace(/\/+$/, '')}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
    const health = (await res.json()) as NonNullable<StatusReport['server']['health']>;
    return { url, up: res.status === 200, ...pid, health };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    return { url, up: false, ...pid, error: err.cause?.code ?? err.message };
  }
}
