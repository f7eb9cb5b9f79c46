import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const PHOTO_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.(jpe?g|png|webp)$/i;
export const PLACE_CID = /^[0-9a-f]{16}$/;

/**
 * Operator photos: files in <data>/photos/<place id>/ are served by the appliance at
 * /maps/v1/place-photo-files/<place id>/<file>. Names are checked against a strict pattern, so a request can
 * never reach outside that folder.
 */
export class PhotoSource {
  constructor(
    readonly dir: string,
    private readonly publicUrl: string,
  ) {}

  operatorPhotos(cid: string): string[] {
    const folder = join(this.dir, cid);
    if (!PLACE_CID.test(cid) || !existsSync(folder)) return [];
    return readdirSync(folder)
      .filter((f) => PHOTO_FILE.test(f))
      .sort()
      .map((f) => `${this.publicUrl}/maps/v1/place-photo-files/${cid}/${f}`);
  }

  /** The file for a request, or undefined when the id or name is not a valid photo reference. */
  file(cid: string, name: string): string | undefined {
    if (!PLACE_CID.test(cid) || !PHOTO_FILE.test(name) || name.includes('..')) return undefined;
    const path = join(this.dir, cid, name);
    return existsSync(path) ? path : undefined;
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
