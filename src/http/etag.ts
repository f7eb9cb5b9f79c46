import { etagOf } from '../core/etag.js';
import type { HttpReply, HttpRequest } from './types.js';

/** Strong ETag plus If-None-Match -> 304, so mobile clients revalidate static resources without re-downloading. */
export function withEtag(req: HttpRequest, reply: HttpReply, known?: string): HttpReply {
  if (reply.status !== 200 || reply.body === undefined) return reply;
  const tag = known ?? etagOf(reply.body);
  reply.headers['ETag'] = tag;
  const inm = req.headers['if-none-match'];
  if (inm && inm.split(',').some((t) => t.trim() === tag || t.trim() === '*')) {
    return { status: 304, headers: reply.headers };
  }
  return reply;
}
