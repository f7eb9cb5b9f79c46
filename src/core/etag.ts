import { createHash } from 'node:crypto';

/** Strong ETag of a body: a quoted, shortened SHA-1 (collisions are irrelevant at this length for cache validation). */
export const etagOf = (body: Buffer | string): string =>
  `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`;
