import { randomBytes } from 'node:crypto';

/** Serialised forms of the Serialised values met by the stringify() call under way (it is synchronous). */
let raws: (string | Uint8Array)[] | undefined;
/** Marks carry a per-process nonce, so no string in the data (a street name with NULs) can pass for one. */
const NONCE = randomBytes(6).toString('hex');
const RAW_MARK = new RegExp(`"\\\\u0000${NONCE}(\\d+)\\\\u0000"`, 'g');

/**
 * A value whose JSON text its producer already wrote (as a string, or as UTF-8 bytes), embedded by stringify() as
 * it is instead of being serialised again. A long route's object is hundreds of KB of coordinates; serialising it
 * means scanning every character for escapes, and encoding it to UTF-8 for the socket once more. Elsewhere
 * (JSON.stringify itself, a log line) it serialises as its value.
 */
export class Serialised {
  constructor(readonly json: string | Uint8Array) {}

  toJSON(): unknown {
    if (!raws) return JSON.parse(typeof this.json === 'string' ? this.json : Buffer.from(this.json).toString('utf8'));
    raws.push(this.json);
    return `\u0000${NONCE}${raws.length - 1}\u0000`; // a mark stringify() swaps for the text once the rest is serialised
  }
}

/**
 * `before` + JSON.stringify(data) + `after`, with every Serialised value written as its own text: a string, or,
 * when any of them is bytes, the answer's pieces in order (UTF-8), the bytes among them as they are (not copied).
 */
export function stringify(data: unknown, before = '', after = ''): string | Uint8Array[] | undefined {
  const found: (string | Uint8Array)[] = (raws = []);
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } finally {
    raws = undefined;
  }
  if (json === undefined) return undefined;
  if (!found.length) return before + json + after;
  if (found.every((f) => typeof f === 'string'))
    return before + json.replace(RAW_MARK, (m, i: string) => found[Number(i)] ?? m) + after;
  const pieces: Uint8Array[] = [];
  let text = before;
  let last = 0;
  for (const m of json.matchAll(RAW_MARK)) {
    const raw = found[Number(m[1])];
    if (raw === undefined) continue;
    text += json.slice(last, m.index);
    last = m.index + m[0].length;
    if (typeof raw === 'string') text += raw;
    else {
      pieces.push(Buffer.from(text), raw);
      text = '';
    }
  }
  pieces.push(Buffer.from(text + json.slice(last) + after));
  return pieces;
}
