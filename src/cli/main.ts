import { Command, CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { CliError, processIo, type Io } from './io.js';
import { makeKeysCommand } from './keys.js';
import { makeServeCommand } from './serve.js';
import { makeImportCommand } from './import.js';
import { makeSeedCommand } from './seed.js';
import { makeTilesCommand } from './tiles.js';
import { makeSelftestCommand } from './selftest.js';
import { makeQuotasCommand } from './quotas.js';
import { makeStatusCommand } from './status.js';
import { makeConfigCommand } from './config.js';
import { makeReloadCommand } from './reload.js';
import { makeClusterCommand } from './cluster.js';

export function makeProgram(io: Io): CommandUnknownOpts {
  const program = new Command('svcmaps')
    .description('self-hostable maps appliance: places, routing, tiles, styles and glyphs, offline')
    .version('0.1.0')
    .showHelpAfterError(false);
  program.addCommand(makeServeCommand(io));
  program.addCommand(makeKeysCommand(io));
  program.addCommand(makeImportCommand(io));
  program.addCommand(makeSeedCommand(io));
  program.addCommand(makeTilesCommand(io));
  program.addCommand(makeStatusCommand(io));
  program.addCommand(makeQuotasCommand(io));
  program.addCommand(makeSelftestCommand(io));
  program.addCommand(makeReloadCommand(io));
  program.addCommand(makeConfigCommand(io));
  program.addCommand(makeClusterCommand(io));
  const configure = (c: CommandUnknownOpts) => {
    c.exitOverride();
    c.configureOutput({ writeOut: io.out, writeErr: io.err });
    c.commands.forEach(configure);
  };
  configure(program);
  return program;
}

/** Runs the CLI and returns the exit code; errors are one line on stderr. */
export async function run(argv: string[], io: Io = processIo): Promise<number> {
  try {
    await makeProgram(io).parseAsync(argv);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : e.exitCode || 1; // commander already printed it
    if (e instanceof CliError) {
      io.err(`svcmaps: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`svcmaps: ${(e as Error)?.message ?? String(e)}\n`);
    return 1;
  }
}
