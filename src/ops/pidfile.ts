import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';
import type { ReloadResult } from './reload.js';

/** `<data>/svcmaps.pid`: written by `serve` once it listens, so `svcmaps reload` and `status` can find it. */
export const PID_FILE = 'svcmaps.pid';
/** `<data>/svcmaps.reload.json`: the outcome of the last reload, so `svcmaps reload` can report what happened. */
export const RELOAD_FILE = 'svcmaps.reload.json';

export interface PidInfo {
  pid: number;
  url: string;
  started_at: string;
}

export interface ReloadStatus {
  pid: number;
  at: string;
  ok: boolean;
  results: ReloadResult[];
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

export function writePidFile(dataDir: string, info: PidInfo): void {
  writeAtomic(join(dataDir, PID_FILE), JSON.stringify(info) + '\n');
}

/** Removes the pid file only if it is still ours (another server may have taken over the directory). */
export function removePidFile(dataDir: string, pid = process.pid): void {
  const f = join(dataDir, PID_FILE);
  if (readPidFile(dataDir)?.pid === pid) rmSync(f, { force: true });
}

export function readPidFile(dataDir: string): PidInfo | undefined {
  const f = join(dataDir, PID_FILE);
  if (!existsSync(f)) return undefined;
  try {
    const v = JSON.parse(readFileSync(f, 'utf8')) as PidInfo;
    return Number.isInteger(v?.pid) && v.pid > 0 ? v : undefined;
  } catch (e) {
    if (e instanceof SyntaxError || isErrno(e, 'ENOENT')) return undefined; // not a pid file, or removed meanwhile
    throw e;
  }
}

/** True when a process with this pid exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if (isErrno(e, 'EPERM')) return true; // someone else's process
    if (isErrno(e, 'ESRCH')) return false;
    throw e;
  }
}

export function writeReloadStatus(dataDir: string, results: ReloadResult[]): ReloadStatus {
  const status = { pid: process.pid, at: new Date().toISOString(), ok: results.every((r) => r.ok), results };
  writeAtomic(join(dataDir, RELOAD_FILE), JSON.stringify(status) + '\n');
  return status;
}

export function readReloadStatus(dataDir: string): ReloadStatus | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, RELOAD_FILE), 'utf8')) as ReloadStatus;
  } catch (e) {
    if (e instanceof SyntaxError || isErrno(e, 'ENOENT')) return undefined; // no reload yet, or not a status file
    throw e;
  }
}
