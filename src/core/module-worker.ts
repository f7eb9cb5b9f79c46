import { Worker, type TransferListItem } from 'node:worker_threads';

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
        // a parent started with `node --input-type=module -e` would pass a flag a file-backed worker refuses
        execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')),
      });
}
