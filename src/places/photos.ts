import { constants, existsSync, readdirSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { isErrno } from '../core/errors.js';
import { processWarnings, type Logger } from '../core/log.js';

/** The errors that mean "no such photo": anything else reading one is a fault to surface. */
const isAbsent = (e: unknown): boolean => isErrno(e, 'ENOENT', 'ENOTDIR');

const PHOTO_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.(jpe?g|png|webp)$/i;
const PLACE_CID = /^[0-9a-f]{16}$/;

/**
 * The largest operator photo file served (10 MiB). A larger file is treated as absent: it is not listed and its URL
 * answers 404, and it is never read into memory.
 */
export const PHOTO_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Operator photos: files in <data>/photos/<place id>/ are served by the appliance at
 * /maps/v1/place-photo-files/<place id>/<file>. Names are checked against a strict pattern, so a request can
 * never reach outside that folder.
 */
export class PhotoSource {
  constructor(
    readonly dir: string,
    private readonly publicUrl: string,
    readonly maxBytes = PHOTO_MAX_BYTES,
    private readonly log: Logger = processWarnings,
  ) {}

  operatorPhotos(cid: string): string[] {
    const folder = join(this.dir, cid);
    if (!PLACE_CID.test(cid) || !existsSync(folder)) return [];
    return readdirSync(folder)
      .filter((f) => PHOTO_FILE.test(f) && this.servable(join(folder, f)))
      .sort()
      .map((f) => `${this.publicUrl}/maps/v1/place-photo-files/${cid}/${f}`);
  }

  /** The file for a request, or undefined when the id or name is not a valid photo reference. */
  file(cid: string, name: string): string | undefined {
    if (!PLACE_CID.test(cid) || !PHOTO_FILE.test(name) || name.includes('..')) return undefined;
    return join(this.dir, cid, name);
  }

  /**
   * A photo's bytes, read off the event loop; undefined when the reference is invalid, the file is missing or not a
   * regular file, or it is larger than maxBytes (checked on the open descriptor before anything is read). Any other
   * failure to read it (no permission, an I/O error) is thrown: the request answers 500 and the error is logged.
   */
  async read(cid: string, name: string): Promise<Buffer | undefined> {
    const path = this.file(cid, name);
    if (!path) return undefined;
    // O_NONBLOCK: a FIFO planted under a photo name must not hold a libuv thread in open(); regular files ignore it.
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((e: unknown) => {
      if (isAbsent(e)) return undefined;
      throw e;
    });
    if (!fh) return undefined;
    try {
      const st = await fh.stat();
      if (!st.isFile() || st.size > this.maxBytes) return undefined;
      const buf = Buffer.allocUnsafe(st.size);
      let n = 0;
      while (n < buf.length) {
        const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break; // the file shrank while being read
        n += bytesRead;
      }
      return buf.subarray(0, n);
    } finally {
      await fh.close();
    }
  }

  private servable(path: string): boolean {
    try {
      const st = statSync(path);
      return st.isFile() && st.size <= this.maxBytes;
    } catch (e) {
      if (isAbsent(e)) return false; // removed since the folder was listed
      // One unreadable file leaves that photo out of the place's listing (logged), not the place's details: a request
      // for the photo itself answers 500 (read).
      this.log.warn('operator photo left out: it cannot be checked', { file: path, error: (e as Error).message });
      return false;
    }
  }
}

/** Direct image URLs from OSM tags: `image` when it is an http(s) URL, `wikimedia_commons` File: pages via FilePath. */
export function osmPhotoUrls(tags: Record<string, string>): string[] {
  const out: string[] = [];
  const image = tags['image'];
  if (image && /^https?:\/\/\S+$/i.test(image)) out.push(image);
  const commons = tags['wikimedia_commons'];
  if (commons && /^File:/i.test(commons)) {
    out.push(
      `https://commons.wikimedia.org/wiki/Special:FilePath/${encodeURIComponent(commons.slice(5).replace(/ /g, '_'))}`,
    );
  }
  return out;
}
