import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';

/** `<data>/svcmaps.lock`: a small SQLite file whose write lock a running server holds for as long as it lives. */
const LOCK_FILE = 'svcmaps.lock';

export interface LockOwner {
  pid: number;
  started_at: string;
}

export interface ServerLock {
  release(): void;
}

/** Another live server holds the data directory; `owner` is who it says it is (absent while it is starting). */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | undefined,
  ) {
    super(
      `data directory ${dataDir} is in use by svcmaps server pid ${owner?.pid ?? '(unknown, starting up)'}` +
        (owner?.started_at ? ` (started ${owner.started_at})` : '') +
        '; stop it first or serve another --data',
    );
    this.name = 'DataDirInUse';
  }
}

const isBusy = (e: unknown) => /^SQLITE_(BUSY|LOCKED)/.test((e as { code?: string }).code ?? '');

/**
 * Makes the data directory hold one server. The lock is SQLite's write lock on `svcmaps.lock` (an fcntl lock
 * underneath), held by an open `BEGIN IMMEDIATE` transaction for the life of the process: the kernel drops it when
 * the process ends in any way, kill -9 included, so a crashed server can never leave it stale. The owner's pid is
 * committed to the file just before the lock is taken for good; a refused server only reads it (readers are not
 * blocked by the write lock) and writes nothing.
 */
export function lockDataDir(dataDir: string, owner: LockOwner = defaultOwner()): ServerLock {
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (e) {
        if (!isBusy(e)) throw e;
        throw new DataDirInUse(dataDir, readOwner(db));
      }
      db.exec('CREATE TABLE IF NOT EXISTS owner (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER, started_at TEXT)');
      db.prepare('INSERT OR REPLACE INTO owner (id, pid, started_at) VALUES (1, ?, ?)').run(
        owner.pid,
        owner.started_at,
      );
      db.exec('COMMIT');
      // Take the lock again and keep it. Another server starting in this instant may have slipped in between: then
      // whoever holds the lock now must be the one the file names, or the lock is given back and taken afresh.
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (e) {
        if (!isBusy(e)) throw e;
        throw new DataDirInUse(dataDir, readOwner(db));
      }
      if (readOwner(db)?.pid === owner.pid || attempt >= 3) break;
      db.exec('ROLLBACK');
    }
  } catch (e) {
    db.close();
    throw e;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

function readOwner(db: Database.Database): LockOwner | undefined {
  try {
    return db.prepare('SELECT pid, started_at FROM owner WHERE id = 1').get() as LockOwner | undefined;
  } catch (e) {
    // not created yet: the holder is still starting
    if (e instanceof Database.SqliteError && /no such table/.test(e.message)) return undefined;
    throw e;
  }
}

const defaultOwner = (): LockOwner => ({ pid: process.pid, started_at: new Date().toISOString() });

/**
 * Who holds the data directory's lock right now: the running server (its recorded owner), or undefined when no server
 * holds it (so a pid file naming a live process names somebody else, e.g. a pid reused after a crash). Probing takes
 * the lock for an instant when it is free. 'unknown' when this user cannot open the lock file for writing.
 */
export function lockHolder(dataDir: string): LockOwner | undefined | 'unknown' {
  const file = join(dataDir, LOCK_FILE);
  if (!existsSync(file)) return undefined; // no server ever ran here
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 0, fileMustExist: true });
  } catch (e) {
    if (e instanceof Database.SqliteError || isErrno(e, 'EACCES', 'EPERM')) return 'unknown'; // cannot open it
    throw e;
  }
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return undefined;
  } catch (e) {
    if (isBusy(e)) return readOwner(db) ?? { pid: 0, started_at: '' };
    if (e instanceof Database.SqliteError) return 'unknown'; // read-only to this user: cannot take the lock to tell
    throw e;
  } finally {
    db.close();
  }
}
