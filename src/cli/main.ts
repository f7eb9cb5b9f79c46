import { readFileSync } from 'node:fs';
import { Command, CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { CliError, processIo, type Io } from './io.js';

type MakeCommand = (io: Io) => CommandUnknownOpts;

/**
 * Each verb's module, loaded when it runs: `svcmaps serve` does not load what import, seed or selftest need
 * (~90 ms of a start that must answer /livez within a second). In this order in --help.
 */
const COMMANDS: Record<string, () => Promise<MakeCommand>> = {
  serve: async () => (await import('./serve.js')).makeServeCommand,
  keys: async () => (await import('./keys.js')).makeKeysCommand,
  import: async () => (await import('./import.js')).makeImportCommand,
  seed: async () => (await import('./seed.js')).makeSeedCommand,
  tiles: async () => (await import('./tiles.js')).makeTilesCommand,
  status: async () => (await import('./status.js')).makeStatusCommand,
  quotas: async () => (await import('./quotas.js')).makeQuotasCommand,
  selftest: async () => (await import('./selftest.js')).makeSelftestCommand,
  reload: async () => (await import('./reload.js')).makeReloadCommand,
  config: async () => (await import('./config.js')).makeConfigCommand,
  cluster: async () => (await import('./cluster.js')).makeClusterCommand,
};

/** The package's version, from its own package.json: two levels up from src/cli/ and from dist/cli/ alike. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The program with the verb `argv` asks for, or with every verb (help, a version, an unknown verb). */
export async function makeProgram(io: Io, argv: string[] = []): Promise<CommandUnknownOpts> {
  const program = new Command('svcmaps')
    .description('self-hostable maps appliance: places, routing, tiles, styles and glyphs, offline')
    .version(packageVersion())
    .showHelpAfterError(false);
  const verb = argv[2];
  const names = verb && Object.hasOwn(COMMANDS, verb) ? [verb] : Object.keys(COMMANDS);
  for (const make of await Promise.all(names.map((n) => COMMANDS[n]!()))) program.addCommand(make(io));
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
    await (await makeProgram(io, argv)).parseAsync(argv);
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
