import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { inspectDataDir, probeServer, type StatusReport } from '../ops/status.js';
import { GAZETTEER_SOURCE } from '../places/sources/gazetteer.js';
import { readPidFile } from '../ops/pidfile.js';
import { fmtBytes, summaryTable } from './tiles-format.js';
import { CliError, type Io } from './io.js';
import { commandConfig } from './options.js';

const n = (v: number) => v.toLocaleString('en-US');

/** The report as `svcmaps status` prints it. */
export function statusText(r: StatusReport): string {
  const out: string[] = [];
  const free = r.disk.free_bytes === null ? '' : `, ${fmtBytes(r.disk.free_bytes)} free`;
  out.push(`data directory  ${r.data_dir} (${fmtBytes(r.disk.used_bytes)} used${free})`);
  const s = r.server;
  const health = s.health
    ? ` — database ${s.health.postgres}, cache ${s.health.redis}${s.health.svc_wired ? '' : ', engine disabled'}`
    : '';
  const pid = s.pid ? ` (pid ${s.pid}${s.pid_alive ? '' : ', not running: stale pid file'})` : '';
  out.push(`server          ${s.up ? 'up' : 'DOWN'} at ${s.url}${pid}${health}${s.error ? ` — ${s.error}` : ''}`);
  out.push(
    `api keys        ${r.store ? `${r.store.keys} (${r.store.active_keys} active), store ${fmtBytes(r.store.bytes)}` : 'no store yet (created by the first serve or keys create)'}`,
  );
  if (r.places) {
    out.push(`places          ${n(r.places.places)} places, ${fmtBytes(r.places.bytes)}`);
    for (const src of r.places.sources)
      out.push(
        `  ${src.source.padEnd(28)} ${n(src.rows).padStart(9)} row${src.rows === 1 ? ' ' : 's'}  imported ${src.imported_at}${src.file ? `  (${src.file})` : ''}`,
      );
    // the embedded gazetteer alone has none and needs none (a few thousand places per cell at most)
    if (!r.places.near_tokens && r.places.sources.some((x) => x.source !== GAZETTEER_SOURCE))
      out.push(
        '  imported before near tokens: nearby autocomplete reads every match; `svcmaps import --only places` adds them',
      );
  } else out.push('places          none (serve installs the embedded gazetteer on first run)');
  const g = r.roads;
  out.push(
    g
      ? `road graph      ${fmtBytes(g.bytes)}${g.nodes !== undefined ? `, ${n(g.nodes)} nodes, ${n(g.edges ?? 0)} edges` : ''}${g.source ? ` from ${g.source}` : ''}, built ${g.built_at ?? g.modified}`
      : 'road graph      none imported (directions answer the degraded straight line; run svcmaps import <file.osm.pbf>)',
  );
  if (g?.unreadable) out.push(`  unreadable: ${g.unreadable}`);
  if (g?.search_blocks === false)
    out.push(
      '  written before search blocks: they are made at every start (~0.5 s and +17% memory); `svcmaps import --only roads` writes them',
    );
  out.push(
    r.render
      ? `render data     ${fmtBytes(r.render.bytes)}${r.render.meta.source ? ` from ${r.render.meta.source}` : ''}${r.render.meta.imported_at ? `, imported ${r.render.meta.imported_at}` : ''}`
      : 'render data     none imported (Natural Earth basemap only)',
  );
  if (!r.tiles.length) out.push('tile pyramid    empty (tiles are stored as they are served, or by svcmaps seed)');
  for (const t of r.tiles) {
    out.push(`tile pyramid    ${t.file.split('/').pop()} (${256 * t.scale} px), ${fmtBytes(t.bytes)}`);
    out.push(
      summaryTable(
        t.zooms.map((z) => ({ z: z.z, cols: { tiles: z.tiles, size: z.bytes } })),
        '',
      )
        .trimEnd()
        .replace(/^/gm, '  '),
    );
  }
  return out.join('\n') + '\n';
}

async function clusterKeyCounts(
  io: Io,
  o: { data?: string; config?: string },
  local: StatusReport['store'],
): Promise<StatusReport['store']> {
  const { withAdmin } = await import('./keys.js');
  const keys = await withAdmin(io, o, (admin) => admin.list());
  return { bytes: local?.bytes ?? 0, keys: keys.length, active_keys: keys.filter((k) => k.active).length };
}

/** Exit codes: 0 = data directory present and server up, 3 = server not answering (like `systemctl status`), 1 = error. */
export function makeStatusCommand(io: Io): CommandUnknownOpts {
  return new Command('status')
    .description(
      'what the data directory holds (places sources, road graph, tile pyramid, disk use) and whether a server is up',
    )
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--url <url>', 'server to probe (default: the one in svcmaps.pid, else the configured host and port)')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const config = commandConfig(io, o);
      const root = resolve(config.data_dir);
      if (!existsSync(root)) throw new CliError(`data directory ${root} does not exist (svcmaps serve creates it)`);
      const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
      const scheme = config.tls.cert ? 'https' : 'http';
      const url =
        o.url ?? readPidFile(root)?.url ?? `${scheme}://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
      const report: StatusReport = { ...inspectDataDir(root), server: await probeServer(url, root) };
      // A cluster node's keys live in PostgreSQL, not in its data directory's SQLite store.
      if (config.cluster.postgres_url) report.store = await clusterKeyCounts(io, o, report.store);
      io.out(o.json ? JSON.stringify(report) + '\n' : statusText(report));
      if (!report.server.up) throw new CliError(`no healthy server at ${url}`, 3);
    });
}
