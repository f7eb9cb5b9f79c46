import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isErrno } from './errors.js';

/**
 * Engine threads (routing, places, rendering) run at a lower CPU priority than the HTTP thread, so on a machine with
 * fewer cores than busy threads a long search or a map draw yields to hot-path requests instead of sharing a core
 * with them evenly. Linux keeps a nice value per thread (setpriority on the thread's id); elsewhere, or if refused,
 * the thread keeps the process's. Call it from the thread itself.
 */
export function lowerThreadPriority(nice: number): void {
  if (!nice) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch (e) {
    // not Linux (no /proc/thread-self), or not allowed: same priority as the process
    if (!isErrno(e, 'ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ENOSYS')) throw e;
  }
}
