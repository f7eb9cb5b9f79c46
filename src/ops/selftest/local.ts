import { chmodSync, copyFileSync, constants, cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../app.js';
import type { Config } from '../../config/defaults.js';
import { silentLogger } from '../../core/log.js';
import { haversineMeters } from '../../core/geo.js';
import { SUPER_ADMIN } from '../../auth/caller.js';
import { openDb } from '../../store/db.js';
import { ensurePlacesDb } from '../../places/load.js';
import { PLACES_FILE } from '../../store/places/schema.js';
import { GAZETTEER_SOURCE } from '../../places/sources/gazetteer.js';
import { GRAPH_FILE, loadGraph } from '../../routing/graph.js';
import { PID_FILE, RELOAD_FILE } from '../pidfile.js';
import { Client } from './client.js';
import type { Target } from './types.js';

export interface LocalAppliance {
  target: Target;
  dir: string;
  /** What was copied, for the report header. */
  copied: string[];
  close(keep?: boolean): void;
}

/** Tile pyramids are caches, rebuilt on demand: the self-test starts with an empty warm tier instead of copying them. */
const SKIP = (name: string) =>
  name === PID_FILE ||
  name === RELOAD_FILE ||
  /^tiles(@\dx)?\.mbtiles/.test(name) ||
  /\.(db|sqlite)-(wal|shm|journal)$/.test(name) ||
  name.includes('.tmp-');

/**
 * Copies the operator's data directory: SQLite files through SQLite's online backup (consistent even while a
 * server writes to them), everything else as files (reflinked where the filesystem can).
 */
async function copyDataDir(src: string, dst: string): Promise<string[]> {
  if (!existsSync(src)) return [];
  const copied: string[] = [];
  for (const e of readdirSync(src, { withFileTypes: true })) {
    if (SKIP(e.name)) continue;
    const from = join(src, e.name);
    const to = join(dst, e.name);
    if (e.isDirectory()) cpSync(from, to, { recursive: true });
    else if (/\.db$/.test(e.name)) {
      const db = openDb(from, { readonly: true });
      try {
        await db.backup(to);
      } finally {
        db.close();
      }
    } else if (e.isFile()) {
      copyFileSync(from, to, constants.COPYFILE_FICLONE);
      if (e.name.endsWith('.secret')) chmodSync(to, 0o600);
    } else continue;
    copied.push(e.name);
  }
  return copied;
}

/** Node pairs 1-15 km apart from the imported graph, to route between. */
function routePairs(file: string, n = 6): Array<[[number, number], [number, number]]> {
  const g = loadGraph(file);
  const count = g.meta.baseNodes || g.lat.length;
  const pairs: Array<[[number, number], [number, number]]> = [];
  const pick = () => Math.floor(Math.random() * count);
  for (let tries = 0; pairs.length < n && tries < n * 200; tries++) {
    const a = pick();
    const b = pick();
    const d = haversineMeters({ lat: g.lat[a]!, lng: g.lon[a]! }, { lat: g.lat[b]!, lng: g.lon[b]! });
    if ((d > 1000 && d < 15_000) || tries > n * 150)
      pairs.push([
        [g.lat[a]!, g.lon[a]!],
        [g.lat[b]!, g.lon[b]!],
      ]);
  }
  return pairs;
}

/** One searchable sample per imported places source, to prove imports are served, not just the gazetteer. */
function importedPlaces(dir: string): NonNullable<Target['importedPlaces']> {
  const db = openDb(join(dir, PLACES_FILE), { readonly: true });
  try {
    const sources = db
      .prepare('SELECT source FROM sources WHERE source <> ? ORDER BY imported_at')
      .pluck()
      .all(GAZETTEER_SOURCE) as string[];
    const top = db.prepare('SELECT name, lat, lng FROM places WHERE source = ? ORDER BY importance DESC LIMIT 1');
    return sources.slice(-5).flatMap((source) => {
      const p = top.get(source) as { name: string; lat: number; lng: number } | undefined;
      return p ? [{ source, ...p }] : [];
    });
  } finally {
    db.close();
  }
}

/** A throwaway appliance over a copy of `config.data_dir`, on a free loopback port, with its own keys. */
export async function startLocal(config: Config): Promise<LocalAppliance> {
  const dir = mkdtempSync(join(tmpdir(), 'svcmaps-selftest-'));
  try {
    const copied = await copyDataDir(config.data_dir, dir);
    await ensurePlacesDb(dir);
    const app = createApp(
      {
        ...config,
        data_dir: dir,
        host: '127.0.0.1',
        port: 0,
        tls: { cert: '', key: '' },
        metrics: { ...config.metrics, port: 0 },
      },
      { log: silentLogger },
    );
    const server = await app.listen().catch((e) => {
      app.close();
      throw e;
    });
    await app.loaded; // the directions check wants the imported graph, not the degraded line of its loading time
    const make = (o: { perMinute?: number; daily?: number; name?: string; role?: string }) => {
      const k = app.services.keyAdmin.create({
        plan: 'selftest',
        perMinute: o.perMinute ?? 100_000,
        daily: o.daily ?? 1_000_000,
        name: o.name,
        role: o.role,
      });
      return { id: k.id, key: k.key };
    };
    const user = make({ name: 'selftest' });
    const admin = make({ name: 'selftest-admin', role: SUPER_ADMIN });
    const graph = join(dir, GRAPH_FILE);
    const builtin = config.routing.engine === 'builtin';
    return {
      dir,
      copied,
      target: {
        mode: 'local',
        url: server.url,
        client: new Client(server.url, user.key),
        adminKey: admin.key,
        makeKey: make,
        routePairs: !builtin ? undefined : existsSync(graph) ? routePairs(graph) : null,
        importedPlaces: importedPlaces(dir),
      },
      close(keep = false) {
        app.close();
        if (!keep) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
