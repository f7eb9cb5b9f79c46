import type { Maneuver } from '../types.js';

/**
 * Maneuvers as JSON text written straight into a buffer: the same bytes as Buffer.from(JSON.stringify(list)), in
 * a fifth of the time. A cross-country path has ~300 maneuvers and ~1,200 numbers; JSON.stringify formats each
 * number with the general shortest-round-trip algorithm, which was 0.3 ms a path (0.9 ms of a long answer with two
 * alternatives). Here the numbers the router makes (coordinates in 1e-7 degree, distances and durations in tenths)
 * are written from their integer digits; anything else takes the general path (String(n)), so the bytes are
 * JSON.stringify's whatever the input (upstream engines' maneuvers too).
 */

/** The most bytes writeManeuvers() writes for `list`. */
export function maneuversBytesMax(list: Maneuver[]): number {
  let n = 2;
  for (const m of list) {
    n += 2;
    for (const k in m) {
      const v = (m as unknown as Record<string, unknown>)[k];
      // a key and its value: a string escapes to at most 6 bytes a UTF-16 unit ("\u001f"); a number to at most 25
      n += 6 * k.length + 4;
      if (typeof v === 'string') n += 6 * v.length + 2;
      else if (Array.isArray(v)) n += 2 + 26 * v.length;
      else n += v === null || typeof v !== 'object' ? 25 : Buffer.byteLength(JSON.stringify(v) ?? '');
    }
  }
  return n;
}

/** Writes `list` as JSON into `buf` at `at` (maneuversBytesMax(list) bytes must be free); returns where it ended. */
export function writeManeuvers(buf: Buffer, at: number, list: Maneuver[]): number {
  buf[at++] = 0x5b; // [
  for (let i = 0; i < list.length; i++) {
    if (i) buf[at++] = 0x2c;
    at = writeObject(buf, at, list[i] as unknown as Record<string, unknown>);
  }
  buf[at++] = 0x5d; // ]
  return at;
}

/** ASCII text as bytes, to be copied into answers. */
const ascii = (t: string) => Uint8Array.from(t, (c) => c.charCodeAt(0));
const OPEN_TYPE = ascii('{"type":'),
  MODIFIER = ascii(',"modifier":'),
  EXIT = ascii(',"exit":'),
  INSTRUCTION = ascii(',"instruction":'),
  DISTANCE = ascii(',"distance_m":'),
  DURATION = ascii(',"duration_s":'),
  STREET = ascii(',"street_name":'),
  LOCATION = ascii(',"location":[');

function put(buf: Buffer, at: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) buf[at++] = bytes[i]!;
  return at;
}

/** The most bytes writeRouterManeuvers() writes for `list` (a string escapes to at most 6 bytes a UTF-16 unit). */
export function routerManeuversBytesMax(list: Maneuver[]): number {
  let n = 2;
  for (const m of list)
    n += 128 + 6 * (m.type.length + (m.modifier?.length ?? 0) + m.instruction.length + (m.street_name?.length ?? 0));
  return n;
}

/**
 * The router's own maneuvers, which maneuvers.ts builds with their keys in one order (type, then modifier and exit
 * when they apply, instruction, distance_m, duration_s, street_name, location), written field by field: the same
 * bytes as writeManeuvers (so JSON.stringify's) for such objects, without enumerating each object's keys, which
 * was half of writing a long route's ~300 maneuvers. Anything else goes to writeManeuvers.
 */
export function writeRouterManeuvers(buf: Buffer, at: number, list: Maneuver[]): number {
  buf[at++] = 0x5b; // [
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!;
    if (i) buf[at++] = 0x2c;
    at = writeString(buf, put(buf, at, OPEN_TYPE), m.type);
    if (m.modifier !== undefined) at = writeString(buf, put(buf, at, MODIFIER), m.modifier);
    if (m.exit !== undefined) at = writeNumber(buf, put(buf, at, EXIT), m.exit);
    at = writeString(buf, put(buf, at, INSTRUCTION), m.instruction);
    at = writeNumber(buf, put(buf, at, DISTANCE), m.distance_m);
    at = writeNumber(buf, put(buf, at, DURATION), m.duration_s);
    if (m.street_name !== undefined) at = writeString(buf, put(buf, at, STREET), m.street_name);
    if (m.location) {
      at = writeNumber(buf, put(buf, at, LOCATION), m.location[0]);
      buf[at++] = 0x2c;
      at = writeNumber(buf, at, m.location[1]);
      buf[at++] = 0x5d;
    }
    buf[at++] = 0x7d; // }
  }
  buf[at++] = 0x5d; // ]
  return at;
}

function writeObject(buf: Buffer, at: number, o: Record<string, unknown>): number {
  buf[at++] = 0x7b; // {
  let first = true;
  for (const k in o) {
    const v = o[k];
    // as JSON.stringify: properties whose value has no JSON form are left out
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    if (!first) buf[at++] = 0x2c;
    first = false;
    at = writeString(buf, at, k);
    buf[at++] = 0x3a; // :
    if (typeof v === 'number') at = writeNumber(buf, at, v);
    else if (typeof v === 'string') at = writeString(buf, at, v);
    else if (Array.isArray(v) && v.every((x) => typeof x === 'number')) {
      buf[at++] = 0x5b;
      for (let j = 0; j < v.length; j++) {
        if (j) buf[at++] = 0x2c;
        at = writeNumber(buf, at, v[j] as number);
      }
      buf[at++] = 0x5d;
    } else at += buf.write(JSON.stringify(v), at, 'utf8');
  }
  buf[at++] = 0x7d; // }
  return at;
}

const HEX = '0123456789abcdef';

/**
 * A string as JSON.stringify writes it, UTF-8 encoded, a byte at a time (Buffer.write crosses into C++ on each call,
 * which for the few bytes of a name or a key cost more than the bytes): `"` and `\` escaped, controls as \b \t
 * \n \f \r or \u00xx, a lone surrogate as \udxxx, everything else as itself.
 */
function writeString(buf: Buffer, at: number, s: string): number {
  buf[at++] = 0x22;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) buf[at++] = c;
      else {
        buf[at++] = 0x5c;
        const short = c === 0x22 || c === 0x5c ? c : SHORT_ESCAPE[c];
        if (short !== undefined) buf[at++] = short;
        else at = writeU(buf, at, c);
      }
    } else if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        buf[at++] = 0xf0 | (c >> 18);
        buf[at++] = 0x80 | ((c >> 12) & 0x3f);
        buf[at++] = 0x80 | ((c >> 6) & 0x3f);
        buf[at++] = 0x80 | (c & 0x3f);
      } else {
        buf[at++] = 0x5c;
        at = writeU(buf, at, c);
      }
    } else {
      buf[at++] = 0xe0 | (c >> 12);
      buf[at++] = 0x80 | ((c >> 6) & 0x3f);
      buf[at++] = 0x80 | (c & 0x3f);
    }
  }
  buf[at++] = 0x22;
  return at;
}

/** The letter of \b \t \n \f \r by control code. */
const SHORT_ESCAPE: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };

/** `uxxxx` (the backslash is written): c in lowercase hex. */
function writeU(buf: Buffer, at: number, c: number): number {
  buf[at++] = 0x75;
  for (let shift = 12; shift >= 0; shift -= 4) buf[at++] = HEX.charCodeAt((c >> shift) & 15);
  return at;
}

/**
 * A number as JSON.stringify writes it. A finite n with 1e-6 <= |n| < 1e8 that is exactly a whole number of 1e-7
 * (the double nearest to one) is written from those digits, trailing zeros dropped: such a decimal has at most 15
 * significant digits, so it is the shortest that reads back as n, which is what JavaScript prints (in plain
 * notation in that range). Zero is "0" (also -0); non-finite numbers are null; the rest go through String().
 * The whole part (< 1e8) and the seven fraction digits (< 1e7) are each a 32-bit integer, so their digits come from
 * integer division by ten, which compiles to a multiply: ~2,000 numbers a long route's maneuvers.
 */
function writeNumber(buf: Buffer, at: number, n: number): number {
  if (n === 0) {
    buf[at] = 0x30;
    return at + 1;
  }
  const a = n < 0 ? -n : n;
  if (a >= 1e-6 && a < 1e8) {
    const t = Math.round(a * 1e7);
    if (t / 1e7 === a) {
      if (n < 0) buf[at++] = 0x2d;
      const int = Math.floor(t / 1e7) | 0;
      at = writeDigits(buf, at, int, digitsOf(int));
      let frac = (t - int * 1e7) | 0;
      if (frac !== 0) {
        buf[at++] = 0x2e;
        let len = 7;
        while (frac % 10 === 0) {
          frac = (frac / 10) | 0;
          len--;
        }
        at = writeDigits(buf, at, frac, len); // with its leading zeros
      }
      return at;
    }
  }
  return at + buf.write(Number.isFinite(n) ? String(n) : 'null', at, 'latin1');
}

/** Decimal digits of a non-negative 32-bit integer (1 for 0). */
function digitsOf(x: number): number {
  let d = 1;
  while (x >= 10) {
    x = (x / 10) | 0;
    d++;
  }
  return d;
}

/** The last `len` decimal digits of x (a non-negative 32-bit integer) at `at`, leading zeros written. */
function writeDigits(buf: Buffer, at: number, x: number, len: number): number {
  for (let k = at + len - 1; k >= at; k--) {
    const q = (x / 10) | 0;
    buf[k] = 0x30 + x - q * 10;
    x = q;
  }
  return at + len;
}
