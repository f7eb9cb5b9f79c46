import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const STORE_FILE = 'svcmaps.db';
export const SECRET_FILE = 'tile-token.secret';

export interface DataDir {
  root: string;
  storePath: string;
  secretPath: string;
}

/**
 * Creates the data directory on first use (mode 0700) and names the files inside it.
 *
 * Nothing stored inside it names a path (files are found by their names relative to the directory, imports record
 * the source file's name only), so a prepared directory can be copied to another path or machine and served as it
 * is. The tile-token secret must stay mode 0600 on the way (cp, scp, rsync and tar keep it): `readSecret` refuses a
 * secret that others can read, and install.sh tightens it again.
 */
export function prepareDataDir(root: string): DataDir {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return { root, storePath: join(root, STORE_FILE), secretPath: join(root, SECRET_FILE) };
}

/** Generates the tile-token secret once: 32 random bytes, hex, readable by the owner only. */
export function ensureSecret(path: string): void {
  if (existsSync(path)) return;
  writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
}

export type SecretResult = { ok: true; secret: Buffer } | { ok: false; reason: string };

/**
 * Reads the secret and refuses it (fail closed) when it is missing, too short, or readable by others:
 * a leaked signing key would let anyone mint tile tokens.
 */
export function readSecret(path: string): SecretResult {
  try {
    const st = statSync(path);
    if ((st.mode & 0o077) !== 0) return { ok: false, reason: `${path} is readable by group or others (chmod 600 it)` };
    const hex = readFileSync(path, 'utf8').trim();
    if (!/^[0-9a-f]{64,}$/i.test(hex)) return { ok: false, reason: `${path} does not hold a 256-bit hex secret` };
    return { ok: true, secret: Buffer.from(hex, 'hex') };
  } catch (e) {
    return { ok: false, reason: `${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}` };
  }
}
