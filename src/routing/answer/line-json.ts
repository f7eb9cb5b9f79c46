/**
 * A route line as the JSON text of its coordinates array, written as ASCII digits straight into a buffer (the
 * answer's bytes, route-record.ts). The points come from path.ts linePoints.
 */

/** The most bytes writeLine() writes for a line of `count` points. */
export const lineBytesMax = (count: number): number => 8 + 2 * (count + 1) * 24;

/**
 * Writes a line (`count` points of `pts`, [lng0, lat0, lng1, lat1, ...]) as the JSON text of its coordinates array
 * (`[[lng,lat],...]`, repeated points dropped) into `buf` at `at` (lineBytesMax(count) bytes must be free; `view`
 * is a DataView over buf) and returns where it ended. Done here in the routing thread, so the answer carries the
 * bytes as they are sent (route-record.ts). Coordinates at OSM's own precision, 7 decimals, written as ASCII digits
 * straight into the buffer: a cross-country route has tens of thousands of numbers, and formatting them one string
 * at a time was the largest single cost of answering it. `keep` (indices of `pts`, in order): only those points
 * (the simplified overview, overview.ts).
 */
export function writeLine(
  pts: Float64Array,
  count: number,
  buf: Buffer,
  view: DataView,
  at: number,
  keep?: Uint32Array,
): number {
  buf[at++] = 0x5b; // [
  let lx = NaN,
    ly = NaN,
    written = 0;
  const points = keep ? keep.length : count;
  for (let k = 0; k < points; k++) {
    const i = keep ? keep[k]! : k;
    const x = Math.round(pts[2 * i]! * 1e7),
      y = Math.round(pts[2 * i + 1]! * 1e7);
    if (x === lx && y === ly) continue;
    at = writePoint(buf, view, at, x, y, written++ > 0);
    lx = x;
    ly = y;
  }
  if (written === 1) at = writePoint(buf, view, at, lx, ly, true);
  buf[at++] = 0x5d; // ]
  return at;
}

/** The line's JSON text as a string (tests and benchmarks; answers use writeLine through route-record.ts). */
export function lineJson(pts: Float64Array, count: number, keep?: Uint32Array): string {
  const buf = Buffer.allocUnsafe(lineBytesMax(count));
  const end = writeLine(pts, count, buf, new DataView(buf.buffer, buf.byteOffset, buf.length), 0, keep);
  return buf.toString('latin1', 0, end);
}

/** `,[x,y]` (comma when `comma`) for coordinates in units of 1e-7 degree. */
function writePoint(buf: Buffer, view: DataView, at: number, x: number, y: number, comma: boolean): number {
  if (comma) buf[at++] = 0x2c;
  buf[at++] = 0x5b;
  at = writeFixed7(buf, view, at, x);
  buf[at++] = 0x2c;
  at = writeFixed7(buf, view, at, y);
  buf[at++] = 0x5d;
  return at;
}

/** DIGITS4[k]: k (0..9999) as four ASCII digits, in the byte order of a little-endian 32-bit store. */
const DIGITS4 = new Uint32Array(10000);
for (let k = 0; k < 10000; k++)
  DIGITS4[k] =
    (0x30 + Math.floor(k / 1000)) |
    ((0x30 + (Math.floor(k / 100) % 10)) << 8) |
    ((0x30 + (Math.floor(k / 10) % 10)) << 16) |
    ((0x30 + (k % 10)) << 24);

/** INT_TEXT[k]: k (0..999) as ASCII digits in the byte order of a little-endian 32-bit store; INT_LEN[k] of them. */
const INT_TEXT = new Uint32Array(1000);
const INT_LEN = new Uint8Array(1000);
for (let k = 0; k < 1000; k++) {
  const t = String(k);
  for (let j = 0; j < t.length; j++) INT_TEXT[k]! |= t.charCodeAt(j) << (8 * j);
  INT_LEN[k] = t.length;
}

/**
 * Writes v / 1e7 with exactly 7 decimals (v an integer, |v| < 2^31, so |v / 1e7| < 215 degrees). In 32-bit integer
 * arithmetic throughout: the floating-point floor and modulo it replaces were a third of writing a line.
 */
function writeFixed7(buf: Buffer, view: DataView, at: number, v: number): number {
  if (v < 0) {
    buf[at++] = 0x2d; // -
    v = -v;
  }
  const int = (v / 10000000) | 0;
  const frac = v - int * 10000000;
  // the integer part (degrees) in one store of up to 4 bytes, the ones past its digits overwritten next
  view.setUint32(at, INT_TEXT[int]!, true);
  at += INT_LEN[int]!;
  // the point and the 7 decimals in two 4-byte stores: ".ddd" (the first 3, whose 4-digit form starts with a 0
  // that the point replaces) and "dddd"
  const hi = (frac / 10000) | 0;
  view.setUint32(at, (DIGITS4[hi]! & ~0xff) | 0x2e, true);
  view.setUint32(at + 4, DIGITS4[frac - hi * 10000]!, true);
  return at + 8;
}
