import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { etagOf } from '../core/etag.js';
import { packagePath } from './paths.js';

export interface ConsoleFile {
  body: Buffer;
  type: string;
  etag: string;
  /** Content-hashed asset (long-lived cache) rather than the page that names them. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

const MAX_FILES = 200;
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * The built console (dist/console, made by scripts/build-console.mjs), read once into memory at start. Requests are
 * answered from a map keyed by relative path, so no request path ever reaches the file system: `..`, encoded
 * slashes or absolute paths simply find no entry.
 */
export class ConsoleFiles {
  private readonly files = new Map<string, ConsoleFile>();

  constructor(readonly dir = packagePath('dist', 'console')) {
    if (!existsSync(join(dir, 'index.html'))) return;
    let bytes = 0;
    const walk = (rel: string) => {
      for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(r);
        else if (e.isFile() && TYPES[extname(e.name)]) {
          if (this.files.size >= MAX_FILES || (bytes += statSync(join(dir, r)).size) > MAX_BYTES)
            throw new Error(`${dir} holds more than the console should (${MAX_FILES} files, ${MAX_BYTES} bytes)`);
          const body = readFileSync(join(dir, r));
          this.files.set(r, {
            body,
            type: TYPES[extname(e.name)]!,
            etag: etagOf(body),
            immutable: r.startsWith('assets/'),
          });
        }
      }
    };
    walk('');
  }

  /** Whether a built console was found. */
  get available(): boolean {
    return this.files.has('index.html');
  }

  get(rel: string): ConsoleFile | undefined {
    return this.files.get(rel);
  }
}
