import { Worker, type TransferListItem } from 'node:worker_threads';

/**
 * Node's options for a file-backed worker: the parent's, inherited (undefined), unless the parent was started with
 * `node --input-type=module -e`, whose flag such a worker refuses. Only the inherited list may hold V8 options
 * (`node --max-old-space-size=8192 bin/svcmaps import` ...): a list given explicitly that names one fails every worker.
 */
const WORKER_EXEC_ARGV = process.execArgv.some((a) => a.startsWith('--input-type'))
  ? process.execArgv.filter((a) => !a.startsWith('--input-type'))
  : undefined;

/**
 * A worker thread running the module `./<module>` beside `here` (the caller's import.meta.url). Under tsx
 * (development, tests) the TypeScript module is bootstrapped through tsx's loader; the built package runs the
 * compiled .js. `transferList`: what workerData moves rather than copies (MessagePorts).
 */
export function startModuleWorker(
  here: string,
  module: string,
  workerData: unknown,
  transferList: TransferListItem[] = [],
): Worker {
  return here.endsWith('.ts')
    ? new Worker(
        `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(new URL(`./${module}.ts`, here).href)}); })`,
        { eval: true, workerData, transferList },
      )
    : new Worker(new URL(`./${module}.js`, here), {
        workerData,
        transferList,
        execArgv: WORKER_EXEC_ARGV,
      });
}
