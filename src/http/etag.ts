import { etagOf } from '../core/etag.js';
import type { HttpReply, HttpRequest } from './types.js';

/** The opaque part of an entity tag, `W/` prefix dropped (RFC 9110 weak comparison). */
const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * Whether an If-None-Match value matches the tag: `*`, or a comma-separated list of entity tags compared weakly, as
 * RFC 9110 section 13.1.2 prescribes for If-None-Match (a proxy that compresses a response marks its tag weak:
 * `W/"x"` must still revalidate `"x"`).
 */
function noneMatch(header: string, tag: string): boolean {
  if (header === tag) return true; // what a client that holds the tile sends: no parsing needed
  if (header.trim() === '*') return true;
  const want = opaque(tag);
  // Entity tags are quoted and hold no quotes, so a list splits on commas outside quotes.
  for (const m of header.matchAll(/\s*((?:W\/)?"[^"]*")\s*(?:,|$)/g)) if (opaque(m[1]!) === want) return true;
  return false;
}

/** Strong ETag plus If-None-Match -> 304, so mobile clients revalidate static resources without re-downloading. */
export function withEtag(req: HttpRequest, reply: HttpReply & { body?: Buffer | string }, known?: string): HttpReply {
  if (reply.status !== 200 || reply.body === undefined) return reply;
  const tag = known ?? etagOf(reply.body);
  reply.headers['ETag'] = tag;
  const inm = req.headers['if-none-match'];
  if (inm && noneMatch(inm, tag)) return { status: 304, headers: reply.headers };
  return reply;
}
