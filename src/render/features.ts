import type { Box } from './mercator.js';

/** What the render importer stores and the tile renderer draws; coordinates are normalised Mercator. */
export type Layer = 'land' | 'water' | 'landuse' | 'building' | 'road' | 'waterway' | 'poi' | 'place';

export interface MapFeature {
  id: number;
  layer: Layer;
  /** Style class within the layer, e.g. road `primary`, landuse `park`, place `city`. */
  cls: string;
  minzoom: number;
  /** Label priority, lower first (e.g. city < town < village). */
  rank: number;
  name?: string;
  nameEn?: string;
  nameAr?: string;
  rings: Float64Array[];
  box: Box;
}

/** Geometry blob: uint32 ring count, uint32 point count per ring, then float64 x,y pairs. Little-endian. */
export function encodeRings(rings: Float64Array[]): Buffer {
  const head = 4 + rings.length * 4;
  const pad = head % 8 === 0 ? 0 : 4;
  const total = rings.reduce((s, r) => s + r.length, 0);
  const buf = Buffer.alloc(head + pad + total * 8);
  buf.writeUInt32LE(rings.length, 0);
  rings.forEach((r, i) => buf.writeUInt32LE(r.length / 2, 4 + i * 4));
  let off = head + pad;
  for (const r of rings) {
    Buffer.from(r.buffer, r.byteOffset, r.byteLength).copy(buf, off);
    off += r.byteLength;
  }
  return buf;
}

export function decodeRings(buf: Buffer): Float64Array[] {
  const n = buf.readUInt32LE(0);
  const head = 4 + n * 4;
  const off = head + (head % 8 === 0 ? 0 : 4);
  // Copy once into an aligned buffer: SQLite blobs come back at arbitrary byte offsets.
  const all = new Float64Array(new Uint8Array(buf.subarray(off)).buffer);
  const rings: Float64Array[] = [];
  let p = 0;
  for (let i = 0; i < n; i++) {
    const len = buf.readUInt32LE(4 + i * 4) * 2;
    rings.push(all.subarray(p, p + len));
    p += len;
  }
  return rings;
}

const ARABIC = /[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]/;
export const isArabic = (s: string): boolean => ARABIC.test(s);

/**
 * Bilingual label lines: English (or the local name) first, Arabic second when it exists and differs, so a driver
 * reads either script. A name that is itself Arabic with no English form is shown once.
 */
export function labelLines(f: { name?: string; nameEn?: string; nameAr?: string }): string[] {
  const local = f.name?.trim();
  const en = f.nameEn?.trim() || (local && !isArabic(local) ? local : undefined);
  const ar = f.nameAr?.trim() || (local && isArabic(local) ? local : undefined);
  const lines: string[] = [];
  if (en) lines.push(en);
  if (ar && ar !== en) lines.push(ar);
  if (!lines.length && local) lines.push(local);
  return lines;
}
