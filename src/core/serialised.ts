import { randomBytes } from 'node:crypto';

/** Serialised forms of the Serialised values met by the stringify() call under way (it is synchronous). */
let raws: string[] | undefined;
/** Marks carry a per-process nonce, so no string in the data (a street name with NULs) can pass for one. */
const NONCE = randomBytes(6).toString('hex');
const RAW_MARK = new RegExp(`"\\\\u0000${NONCE}(\\d+)\\\\u0000"`, 'g');

/**
 * A value whose JSON text its producer already wrote, embedded by stringify() as it is instead of being serialised
 * again. A long route's polyline is a string of some 200 KB of coordinates; serialising it means scanning every
 * character for escapes, four times per answer (each route and the top-level copy). Elsewhere (JSON.stringify
 * itself, a log line) it serialises as its value.
 */
export class Serialised {
  constructor(readonly json: string) {}

  toJSON(): unknown {
    if (!raws) return JSON.parse(this.json) as unknown;
    raws.push(this.json);
    return `\u0000${NONCE}${raws.length - 1}\u0000`; // a mark stringify() swaps for the text once the rest is serialised
  }
}

/** JSON.stringify, with every Serialised value written as its own text. */
export function stringify(data: unknown): string | undefined {
  const found: string[] = (raws = []);
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } finally {
    raws = undefined;
  }
  return json !== undefined && found.length ? json.replace(RAW_MARK, (m, i: string) => found[Number(i)] ?? m) : json;
}
