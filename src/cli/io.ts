/** Where commands write; tests pass their own to capture output. Only bin/ ever exits the process. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/** A failure the user caused or can fix: printed as one line on stderr, exit code 1, no stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
