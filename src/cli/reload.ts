import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { prepareDataDir } from '../store/data-dir.js';
import { lockHolder } from '../store/server-lock.js';
import { processAlive, readPidFile, readReloadStatus, type ReloadStatus } from '../ops/pidfile.js';
import { CliError, type Io } from './io.js';
import { commandConfig, positiveInt } from './options.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the server to write the outcome of the reload this command asked for. */
async function awaitStatus(
  root: string,
  pid: number,
  since: number,
  timeoutMs: number,
): Promise<ReloadStatus | undefined> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const s = readReloadStatus(root);
    if (s && s.pid === pid && Date.parse(s.at) >= since) return s;
    await sleep(50);
  }
  return undefined;
}

export function makeReloadCommand(io: Io): CommandUnknownOpts {
  return new Command('reload')
    .description(
      're-open imported data (places index, road graph, render data) in the running server without a restart',
    )
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--timeout <seconds>', 'how long to wait for the server to confirm', positiveInt('--timeout'), 30)
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const root = prepareDataDir(commandConfig(io, o).data_dir).root;
      const info = readPidFile(root);
      if (!info) throw new CliError(`no server is running on ${root} (no svcmaps.pid; start one with svcmaps serve)`);
      if (!processAlive(info.pid))
        throw new CliError(`stale svcmaps.pid in ${root}: process ${info.pid} is not running`);
      // A live pid is not proof: after a crash the pid may belong to another program, which SIGHUP would stop. The
      // running server holds the data directory's lock; signal only the process that does.
      const holder = lockHolder(root);
      if (holder === undefined)
        throw new CliError(
          `stale svcmaps.pid in ${root}: process ${info.pid} is running but is not a svcmaps server of this directory`,
        );
      if (holder !== 'unknown' && holder.pid !== 0 && holder.pid !== info.pid)
        throw new CliError(
          `svcmaps.pid in ${root} names process ${info.pid}, but the server holding the directory is ${holder.pid}`,
        );
      // Second precision: the status timestamp is compared with the moment the signal left.
      const since = Date.now() - 1;
      process.kill(info.pid, 'SIGHUP');
      const status = await awaitStatus(root, info.pid, since, o.timeout * 1000);
      if (!status)
        throw new CliError(`sent SIGHUP to ${info.pid} but it did not confirm within ${o.timeout} s; see its log`);
      if (o.json) io.out(JSON.stringify(status) + '\n');
      else {
        io.out(`Reloaded server ${info.pid} (${info.url}):\n`);
        for (const r of status.results) io.out(`  ${r.ok ? '✓' : '✗'} ${r.name.padEnd(8)} ${r.detail} (${r.ms} ms)\n`);
        if (!status.results.length) io.out('  nothing registered for reload\n');
      }
      if (!status.ok)
        throw new CliError(
          'reload failed for ' +
            status.results
              .filter((r) => !r.ok)
              .map((r) => r.name)
              .join(', '),
        );
    });
}
