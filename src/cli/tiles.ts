import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { existsSync, rmSync, statSync } from 'node:fs';
import { prepareDataDir } from '../store/data-dir.js';
import { MBTiles, tileHash, tmsRow } from '../store/mbtiles.js';
import { RenderStore } from '../store/render/reader.js';
import { decodedImageSize } from '../render/tile-image.js';
import { SeedArea } from '../tiles/seed/area.js';
import { parseZooms, walk } from '../tiles/seed/plan.js';
import { defaultMetadata, type Scale } from '../tiles/warm-store.js';
import { updateExtent } from '../tiles/seed/jobs.js';
import { xToLng, yToLat } from '../render/mercator.js';
import { fmtBytes, seedTarget, summaryTable } from './tiles-format.js';
import { CliError, type Io } from './io.js';
import { commandConfig } from './options.js';

const SCALES: Scale[] = [1, 2, 3];
const collect = (v: string, prev: string[] = []) => [...prev, v];

/** The MBTiles files to look at: the given one, or every scale present in the data directory. */
function targets(io: Io, o: { data?: string; config?: string }, file?: string): Array<{ path: string; scale?: Scale }> {
  if (file) {
    if (!existsSync(file)) throw new CliError(`no such file: ${file}`);
    return [{ path: file }];
  }
  const dir = prepareDataDir(commandConfig(io, o).data_dir);
  const at = seedTarget(dir.root);
  return SCALES.map((s) => ({ path: at(s), scale: s })).filter((t) => existsSync(t.path));
}

function info(io: Io, o: { data?: string; config?: string; json?: boolean }, file?: string): void {
  const out = targets(io, o, file).map((t) => {
    const m = new MBTiles(t.path, { readonly: true });
    try {
      return {
        path: t.path,
        scale: t.scale,
        bytes: statSync(t.path).size,
        metadata: m.metadata(),
        zooms: m.countsByZoom(),
      };
    } finally {
      m.close();
    }
  });
  const render = file ? undefined : RenderStore.inDataDir(prepareDataDir(commandConfig(io, o).data_dir).root);
  const imported = render?.available ? render.meta() : undefined;
  render?.close();
  if (o.json) return io.out(JSON.stringify({ files: out, render_import: imported ?? null }) + '\n');
  if (!out.length) io.out('no tiles stored yet (they are written as they are served, or by `svcmaps seed`)\n');
  for (const f of out) {
    io.out(`${f.path} (${fmtBytes(f.bytes)} on disk)\n`);
    for (const k of ['name', 'format', 'bounds', 'center', 'minzoom', 'maxzoom'])
      io.out(`  ${k.padEnd(8)} ${f.metadata[k] ?? '-'}\n`);
    io.out(
      summaryTable(
        f.zooms.map((z) => ({ z: z.z, cols: { tiles: z.tiles, size: z.bytes } })),
        '',
      )
        .replace(/^/gm, '  ')
        .trimEnd() + '\n',
    );
  }
  if (!file)
    io.out(
      imported
        ? `render data: ${imported.source} imported ${imported.imported_at}\n`
        : 'render data: none imported (Natural Earth only); run `svcmaps import <file.osm.pbf>`\n',
    );
}

async function validate(io: Io, o: { data?: string; config?: string; json?: boolean }, file?: string): Promise<void> {
  const reports = [];
  for (const t of targets(io, o, file)) {
    const m = new MBTiles(t.path, { readonly: true });
    const problems: string[] = [];
    let checked = 0;
    try {
      const ic = m.integrityCheck();
      if (ic !== 'ok') problems.push(`integrity_check: ${ic}`);
      for (const row of m.storedTiles()) {
        checked++;
        const n = 2 ** row.z;
        const at = `${row.z}/${row.x}/${tmsRow(row.z, row.row)}`;
        if (row.x < 0 || row.x >= n || row.row < 0 || row.row >= n) problems.push(`${at}: outside the 2^z grid`);
        if (row.hash && row.hash !== tileHash(row.data)) problems.push(`${at}: content does not match its stored hash`);
        try {
          const img = await decodedImageSize(row.data);
          if (t.scale && (img.width !== 256 * t.scale || img.height !== 256 * t.scale))
            problems.push(`${at}: ${img.width}x${img.height}, expected ${256 * t.scale} px`);
        } catch (e) {
          problems.push(`${at}: does not decode (${(e as Error).message})`);
        }
        if (problems.length > 1000) break;
      }
    } finally {
      m.close();
    }
    reports.push({ path: t.path, tiles: checked, problems });
  }
  if (o.json) io.out(JSON.stringify(reports) + '\n');
  else
    for (const r of reports)
      io.out(
        `${r.path}: ${r.tiles} tiles checked, ${r.problems.length ? `${r.problems.length} problems\n  ${r.problems.slice(0, 20).join('\n  ')}` : 'ok'}\n`,
      );
  const bad = reports.reduce((s, r) => s + r.problems.length, 0);
  if (!reports.length) throw new CliError('no MBTiles to validate');
  if (bad) throw new CliError(`${bad} problems found`);
}

function exportTiles(
  io: Io,
  o: {
    data?: string;
    config?: string;
    bbox?: string[];
    zoom: string;
    scale: string;
    output: string;
    force?: boolean;
    json?: boolean;
  },
): void {
  if (!o.bbox?.length) throw new CliError('export needs --bbox minLng,minLat,maxLng,maxLat (repeatable)');
  const scale = Number(o.scale) as Scale;
  if (!SCALES.includes(scale)) throw new CliError(`--scale: 1, 2 or 3, got ${o.scale}`);
  let area: SeedArea;
  let zooms: number[];
  try {
    area = new SeedArea(
      o.bbox.map((b) => SeedArea.parseBbox(b)),
      [],
    );
    zooms = parseZooms(o.zoom);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const src = seedTarget(prepareDataDir(commandConfig(io, o).data_dir).root)(scale);
  if (!existsSync(src)) throw new CliError(`nothing stored at scale ${scale}: ${src} does not exist`);
  if (existsSync(o.output) && !o.force) throw new CliError(`${o.output} exists; pass --force to replace it`);
  rmSync(o.output, { force: true });
  const from = new MBTiles(src, { readonly: true });
  const to = new MBTiles(o.output);
  let copied = 0;
  let bytes = 0;
  try {
    to.setMetadata({
      ...defaultMetadata(scale, from.metadata().format ?? 'png'),
      ...from.metadata(),
      name: `svcmaps export${scale > 1 ? ` @${scale}x` : ''}`,
    });
    let batch = [];
    for (const t of walk(area, zooms)) {
      const tile = from.get(t.z, t.x, t.y);
      if (!tile) continue;
      batch.push({ ...t, data: tile.data });
      copied++;
      bytes += tile.data.length;
      if (batch.length >= 500) {
        to.putMany(batch);
        batch = [];
      }
    }
    to.putMany(batch);
    const b = area.box;
    to.setMetadata({ bounds: '-180,-85.051129,180,85.051129' });
    updateExtent(to, [xToLng(b[0]), yToLat(b[3]), xToLng(b[2]), yToLat(b[1])]);
  } finally {
    from.close();
    to.makeStandalone(); // no -wal/-shm companions to forget when copying the export
    to.close();
  }
  if (o.json) io.out(JSON.stringify({ output: o.output, tiles: copied, bytes }) + '\n');
  else io.out(`exported ${copied} tiles (${fmtBytes(bytes)}) to ${o.output}\n`);
}

export function makeTilesCommand(io: Io): CommandUnknownOpts {
  const common = <A extends unknown[]>(c: Command<A>) =>
    c
      .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
      .option('--config <file>', 'config file (JSON)')
      .option('--json', 'machine-readable output');
  const cmd = new Command('tiles').description('inspect, check and export the stored tiles (MBTiles)');
  cmd.addCommand(
    common(
      new Command('info').description('stored tiles per file and zoom, metadata, render data').argument('[file]'),
    ).action((file, o) => info(io, o, file)),
  );
  cmd.addCommand(
    common(
      new Command('validate').description('SQLite integrity check and decode every tile').argument('[file]'),
    ).action((file, o) => validate(io, o, file)),
  );
  cmd.addCommand(
    common(new Command('export').description('copy a bbox/zoom subset of the stored tiles into a standalone MBTiles'))
      .requiredOption('--output <file.mbtiles>', 'file to create')
      .option('--bbox <minLng,minLat,maxLng,maxLat>', 'area (repeatable)', collect)
      .option('--zoom <range>', 'zooms: 0-16 or 12,14', '0-20')
      .option('--scale <n>', '1, 2 or 3', '1')
      .option('--force', 'replace an existing output file')
      .action((o) => exportTiles(io, o)),
  );
  return cmd;
}
