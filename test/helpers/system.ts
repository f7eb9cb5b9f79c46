import { spawnSync } from 'node:child_process';

/**
 * Tests that need a Debian package ask for it here. On a developer's machine a missing package skips the suite with
 * one visible line naming the package; under CI (CI=true) a missing package fails the run instead, so CI can never
 * pass by skipping. Returns whether the suite can run.
 */
export function needsSystem(pkg: string, command: string, what: string): boolean {
  if (onPath(command)) return true;
  const line = `${what} needs the Debian package "${pkg}" (apt-get install -y ${pkg}): ${command} not found`;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(line);
  console.warn(`skipped: ${line}`);
  return false;
}

function onPath(command: string): boolean {
  if (command.startsWith('/')) return spawnSync('test', ['-x', command]).status === 0;
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
