import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { IMPORTERS } from '../import/importers.js';
import { DEFAULT_IMPORT_MEMORY, parseSize } from '../import/node-index.js';
import { importInThreads } from '../import/parallel.js';
import { isPbf } from '../import/types.js';
import type { ImportSummary } from '../import/types.js';
import { prepareDataDir } from '../store/data-dir.js';
import { CliError, type Io } from './io.js';
import { commandConfig } from './options.js';
import { progressBar } from './ui/progress.js';

/** Importer stages whose progress is bytes of the input file read. */
const BYTE_STAGES = new Set(['read']);

export function makeImportCommand(io: Io, signals: NodeJS.EventEmitter = process): CommandUnknownOpts {
  return new Command('import')
    .description(
      'import OpenStreetMap data (.osm.pbf, or newline-delimited GeoJSON .geojsonl[.gz]) into the data directory',
    )
    .argument('<file>')
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--only <names>', 'comma-separated importers to run')
    .option(
      '--memory <size>',
      'memory budget of the import, e.g. 4g or 512m (default 4g, fits an 8 GB machine); past it, node coordinates and way geometries spill to files in the data directory',
    )
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, o) => {
      if (!existsSync(file) || !statSync(file).isFile()) throw new CliError(`no such file: ${file}`);
      const config = commandConfig(io, o);
      let memoryBytes = DEFAULT_IMPORT_MEMORY;
      if (o.memory !== undefined) {
        try {
          memoryBytes = parseSize(String(o.memory));
        } catch (e) {
          throw new CliError(`--memory: ${(e as Error).message}`);
        }
        if (memoryBytes < 64 * 2 ** 20) throw new CliError('--memory: at least 64m');
      }
      const only = o.only
        ? String(o.only)
            .split(',')
            .map((s) => s.trim())
        : undefined;
      const chosen = IMPORTERS.filter((i) => i.accepts(file) && (!only || only.includes(i.name)));
      if (!chosen.length) throw new CliError(`no importer accepts ${file} (expected .osm.pbf or .geojsonl[.gz])`);
      const dir = prepareDataDir(config.data_dir);
      const abort = new AbortController();
      const onSignal = () => abort.abort();
      signals.once('SIGINT', onSignal);
      signals.once('SIGTERM', onSignal);
      const tty = !o.json && Boolean((process.stderr as { isTTY?: boolean }).isTTY);
      const summaries: ImportSummary[] = [];
      const line = (s: ImportSummary) =>
        `${s.importer}: ${Object.entries(s.counts)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')} in ${s.seconds.toFixed(1)} s`;
      const threads = Math.min(chosen.length, availableParallelism());
      try {
        if (chosen.length > 1 && isPbf(file)) {
          // Importers side by side, one thread each, on one read of the file (parallel.ts), building at most
          // `threads` at a time. Their progress interleaves, so each stage reports as log lines (every few seconds,
          // with its ETA) instead of bars redrawn in place.
          const bars = new Map<string, { stage: string; bar: ReturnType<typeof progressBar> }>();
          const done = await importInThreads(
            chosen,
            file,
            dir.root,
            (name, stage, d, total) => {
              let b = bars.get(name);
              if (b?.stage !== stage) {
                b = { stage, bar: progressBar(io.err, false, BYTE_STAGES.has(stage) ? 'bytes' : 'items') };
                bars.set(name, b);
              }
              b.bar.update(`${name}:${stage}`, d, total);
            },
            abort.signal,
            { memoryBytes, threads, pbfBytes: statSync(file).size },
          );
          for (const s of done) io.err(line(s) + '\n');
          summaries.push(...done);
        } else
          for (const imp of chosen) {
            // One bar per stage, so its rate and ETA are the stage's own: file-reading stages count bytes of the
            // input, the others (contraction, index) their own items.
            let stageNow = '';
            let bar = progressBar(io.err, tty);
            const s = await imp.run(
              file,
              dir.root,
              (stage, done, total) => {
                if (stage !== stageNow) {
                  stageNow = stage;
                  bar = progressBar(io.err, tty, BYTE_STAGES.has(stage) ? 'bytes' : 'items');
                }
                bar.update(`${imp.name}:${stage}`, done, total);
              },
              abort.signal,
              { memoryBytes },
            );
            bar.done(line(s));
            summaries.push(s);
          }
      } catch (e) {
        if (abort.signal.aborted) throw new CliError('import interrupted; the previous data is still in service');
        throw e;
      } finally {
        signals.removeListener('SIGINT', onSignal);
        signals.removeListener('SIGTERM', onSignal);
      }
      if (o.json) io.out(JSON.stringify(summaries) + '\n');
      else
        io.out(
          `Imported ${file} into ${dir.root}. Run \`svcmaps reload\` (or restart \`svcmaps serve\`) to load it.\n`,
        );
    });
}
