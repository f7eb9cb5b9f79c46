import { readFileSync } from 'node:fs';
import { isErrno } from '../core/errors.js';

/**
 * glibc's tunable that makes malloc advise the kernel to back its large mappings with transparent huge pages
 * (madvise(MADV_HUGEPAGE); glibc 2.35+). The road graph is one allocation of ~1.4 GB at 600 copies, read at random
 * by every route: with 4 KB pages most of its reads also miss the TLB, and in a virtual machine each miss walks two
 * page tables. With 2 MB pages the whole graph fits the TLB. At 600 copies on a 2-core VM, the same routes in two
 * processes side by side, with against without: x0.93 in-process, x0.94 (long) and x0.96 (local) over HTTP.
 *
 * Node has no madvise, and glibc reads its tunables when the process starts, so this goes in the environment of the
 * `svcmaps serve` process: the systemd unit install.sh writes sets it, and bench/scale.ts starts its servers with it.
 * Kernels whose THP mode is `always` need nothing; with `never` it changes nothing; musl ignores it.
 */
export const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb=1';

/** Below this many bytes of graph the TLB misses cost too little to mention. */
const HINT_FROM_BYTES = 256 * 2 ** 20;

/** The kernel's THP mode ("always", "madvise", "never"), or undefined when it has none (not Linux). */
export function thpMode(file = '/sys/kernel/mm/transparent_hugepage/enabled'): string | undefined {
  try {
    return /\[(\w+)\]/.exec(readFileSync(file, 'utf8'))?.[1];
  } catch (e) {
    if (isErrno(e, 'ENOENT', 'ENOTDIR', 'EACCES')) return undefined; // no such file (not Linux), or not readable
    throw e;
  }
}

/** Whether glibc's huge-page tunable is set (to any value: an operator who set it to 0 chose so) in `env`. */
const hugePagesTunableSet = (env: NodeJS.ProcessEnv): boolean =>
  /(^|:)glibc\.malloc\.hugetlb=/.test(env.GLIBC_TUNABLES ?? '');

/**
 * One line for the operator when a graph of `bytes` would get huge pages only through the tunable and the process
 * was started without it; undefined otherwise.
 */
export function hugePagesHint(bytes: number, env: NodeJS.ProcessEnv, mode = thpMode()): string | undefined {
  if (mode !== 'madvise' || bytes < HINT_FROM_BYTES || hugePagesTunableSet(env)) return undefined;
  return (
    `the road graph is ${Math.round(bytes / 2 ** 20)} MB: start svcmaps serve with ` +
    `GLIBC_TUNABLES=${HUGE_PAGES_TUNABLE} in its environment for routes ~6% faster (transparent huge pages; ` +
    'the systemd unit install.sh writes sets it)'
  );
}

/** The environment for a server process: `env` with the tunable added (kept as is when it names the tunable). */
export function withHugePages(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (hugePagesTunableSet(env)) return env;
  const t = env.GLIBC_TUNABLES;
  return { ...env, GLIBC_TUNABLES: t ? `${t}:${HUGE_PAGES_TUNABLE}` : HUGE_PAGES_TUNABLE };
}
