import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';

/** A Linux CPU list ("0-1", "0,2-3") as the CPUs' numbers; [] when it is not one. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return [];
    const a = Number(m[1]),
      b = Number(m[2] ?? m[1]);
    if (b < a || b - a > 4096) return [];
    for (let c = a; c <= b; c++) cpus.push(c);
  }
  return cpus;
}

/** The CPUs a process's thread may run on (Linux: its Cpus_allowed_list; a cpuset container sees its own), or []. */
export function allowedCpus(task = '/proc/self'): number[] {
  try {
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`${task}/status`, 'utf8'))?.[1];
    return list ? parseCpuList(list) : [];
  } catch {
    return [];
  }
}

/**
 * Keeps the calling thread on one CPU (Linux, through util-linux's taskset: Node has no call for a thread's
 * affinity). Answers whether it did; elsewhere, or if refused, the thread goes on running anywhere. Call it from the
 * thread itself, once: it runs a child process.
 */
export function pinThread(cpu: number): boolean {
  try {
    const tid = readlinkSync('/proc/thread-self').split('/').pop()!;
    execFileSync('taskset', ['-pc', String(cpu), tid], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}
