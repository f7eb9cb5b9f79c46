import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RENDER_DB } from '../store/render/schema.js';
import { renderDataClock } from '../tiles/origins/render.js';
import { prepareDataDir } from '../store/data-dir.js';
import type { MBTiles } from '../store/mbtiles.js';
import { xToLng, yToLat } from '../render/mercator.js';
import { createOrigin } from '../tiles/factory.js';
import { SeedArea } from '../tiles/seed/area.js';
import { bytesPerTile, finishJob, startJob, unfinishedJob, updateExtent, type SeedArgs } from '../tiles/seed/jobs.js';
import { countByZoom, parseZooms } from '../tiles/seed/plan.js';
import { runSeed } from '../tiles/seed/runner.js';
import { openMbtiles, type Scale } from '../tiles/warm-store.js';
import { seedTarget, summaryTable } from './tiles-format.js';
import { CliError, type Io } from './io.js';
import { commandConfig, positiveInt } from './options.js';
import { progressBar } from './ui/progress.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

function parseScales(s: string): Scale[] {
  const out = s.split(',').map((v) => Number(v.trim()));
  if (!out.length || out.some((v) => v !== 1 && v !== 2 && v !== 3))
    throw new CliError(`--scale: expected 1, 2 and/or 3, got "${s}"`);
  return [...new Set(out)].sort() as Scale[];
}

export function makeSeedCommand(io: Io, signals: NodeJS.EventEmitter = process): CommandUnknownOpts {
  return new Command('seed')
    .description('pre-render (or pre-fetch) tiles for an area into the MBTiles warm store, for offline use')
    .option('--bbox <minLng,minLat,maxLng,maxLat>', 'area to seed (repeatable)', collect)
    .option('--polygon <file.geojson>', 'area to seed: Polygon/MultiPolygon GeoJSON')
    .option('--zoom <range>', 'zooms: 0-16, or a list 12,14', '0-14')
    .option('--scale <list>', 'tile scales: 1, 2 (@2x), 3 (@3x)', '1')
    .option('--origin <name>', 'render, xyz or mbtiles (default: tiles.origin from config)')
    .option('--concurrency <n>', 'tiles produced in parallel', positiveInt('--concurrency'), 2)
    .option(
      '--refresh-before <time>',
      'produce again stored tiles written before this ISO time (renderer default: the last import)',
    )
    .option('--resume', 'continue the last interrupted seed job with its original arguments')
    .option('--dry-run', 'print per-zoom tile counts and a size estimate; write nothing')
    .option(
      '--output <file.mbtiles>',
      'write to this MBTiles (and <name>@2x.mbtiles ...) instead of the data directory',
    )
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--json', 'print the summary as JSON')
    .action(async (o) => {
      const config = commandConfig(io, o);
      const dir = prepareDataDir(config.data_dir);
      const target = seedTarget(dir.root, o.output);
      const opened = new Map<Scale, MBTiles>();
      const file = (s: Scale) => opened.get(s) ?? opened.set(s, openMbtiles(target(s), s)).get(s)!;
      try {
        let args: SeedArgs;
        let jobId: number | undefined;
        if (o.resume) {
          const job = unfinishedJob(file(1));
          if (!job) throw new CliError(`nothing to resume: no unfinished seed job in ${target(1)}`);
          args = job.args;
          jobId = job.id;
          io.err(`resuming seed job ${job.id} from ${new Date(job.startedAt).toISOString()}\n`);
        } else {
          if (!o.bbox && !o.polygon)
            throw new CliError('give the area with --bbox (repeatable) or --polygon, or use --resume');
          args = {
            bbox: o.bbox ?? [],
            polygon: o.polygon ? basename(o.polygon) : undefined,
            polygon_geojson: o.polygon ? readPolygon(o.polygon) : undefined,
            zoom: o.zoom,
            scale: o.scale,
            origin: o.origin,
            concurrency: o.concurrency,
            refreshBefore: o.refreshBefore,
          };
        }
        let area: SeedArea;
        let zooms: number[];
        try {
          area = new SeedArea(
            args.bbox.map((b) => SeedArea.parseBbox(b)),
            args.polygon_geojson !== undefined
              ? SeedArea.parsePolygonText(args.polygon_geojson, args.polygon ?? '--polygon')
              : args.polygon
                ? SeedArea.parsePolygonFile(args.polygon) // a job recorded before the GeoJSON was kept in it
                : [],
          );
          zooms = parseZooms(args.zoom);
        } catch (e) {
          throw new CliError((e as Error).message);
        }
        const scales = parseScales(args.scale);
        const originName = args.origin ?? config.tiles.origin;
        // Without --refresh-before, tiles the renderer drew from older render data (before the last import) are stale.
        const refreshBefore =
          args.refreshBefore !== undefined
            ? Date.parse(args.refreshBefore)
            : originName === 'render'
              ? renderDataClock(join(dir.root, RENDER_DB))()
              : undefined;
        if (refreshBefore !== undefined && !Number.isFinite(refreshBefore))
          throw new CliError(`--refresh-before: not an ISO time: ${args.refreshBefore}`);
        const counts = countByZoom(area, zooms);
        const total = [...counts.values()].reduce((a, b) => a + b, 0) * scales.length;

        if (o.dryRun) {
          const rows = zooms.map((z) => ({
            z,
            tiles: counts.get(z)! * scales.length,
            bytes: scales.reduce((s, sc) => s + counts.get(z)! * bytesPerTile(opened.get(sc), z, sc), 0),
          }));
          if (o.json) io.out(JSON.stringify({ total, zooms: rows }) + '\n');
          else
            io.out(
              summaryTable(
                rows.map((r) => ({ z: r.z, cols: { tiles: r.tiles, 'est. size': r.bytes } })),
                `${total} tiles at scale ${scales.join(',')}; estimate only, nothing written`,
              ),
            );
          return;
        }

        const tilesConfig = {
          ...config.tiles,
          origin: originName as typeof config.tiles.origin,
          render_threads: args.concurrency,
        };
        const origin = createOrigin({ ...config, tiles: tilesConfig }, dir.root);
        if (!origin) throw new CliError('no tile origin: tiles.origin is "none"; pass --origin render|xyz|mbtiles');
        jobId ??= startJob(file(1), args);
        const abort = new AbortController();
        const onSignal = () => abort.abort();
        signals.once('SIGINT', onSignal);
        signals.once('SIGTERM', onSignal);
        const bar = progressBar(io.err, !o.json && Boolean((process.stderr as { isTTY?: boolean }).isTTY), 'items');
        let result;
        try {
          result = await runSeed({
            area,
            zooms,
            scales,
            refreshBefore,
            origin,
            total,
            signal: abort.signal,
            concurrency: args.concurrency,
            file,
            progress: (done, t, z) => bar.update(`seed z${z}`, done, t),
          });
        } finally {
          signals.removeListener('SIGINT', onSignal);
          signals.removeListener('SIGTERM', onSignal);
          origin.close?.();
        }
        const written = result.zooms.reduce((s, z) => s + z.written, 0);
        bar.done(
          `seeded ${written} tiles in ${result.seconds.toFixed(1)} s (${(written / Math.max(result.seconds, 1e-3)).toFixed(1)} tiles/s)`,
        );
        const b = area.box;
        for (const s of scales) updateExtent(file(s), [xToLng(b[0]), yToLat(b[3]), xToLng(b[2]), yToLat(b[1])]);
        if (!result.interrupted && !result.failed.length) finishJob(file(1), jobId);
        if (o.json) io.out(JSON.stringify({ job: jobId, ...result, failed: result.failed.slice(0, 100) }) + '\n');
        else {
          io.out(
            summaryTable(
              result.zooms.map((z) => ({
                z: z.z,
                cols: {
                  written: z.written,
                  skipped: z.skipped,
                  missing: z.missing,
                  failed: z.failed,
                  size: z.bytes,
                  'origin s': z.originSeconds,
                },
              })),
              `${written} tiles written to ${target(scales[0]!)} in ${result.seconds.toFixed(1)} s`,
            ),
          );
        }
        if (result.interrupted)
          throw new CliError('seed interrupted; committed tiles are kept. Run `svcmaps seed --resume` to finish', 130);
        if (result.failed.length) {
          throw new CliError(
            `${result.failed.length} tiles failed (first: ${result.failed[0]!.z}/${result.failed[0]!.x}/${result.failed[0]!.y}: ${result.failed[0]!.error}); run \`svcmaps seed --resume\` to retry them`,
          );
        }
      } finally {
        for (const f of opened.values()) f.close();
      }
    });
}

function readPolygon(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`--polygon ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
