/** Geometry blob of render.db's `geom` column: uint32 ring count, uint32 point count per ring, then float64 x,y pairs. Little-endian. */
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
