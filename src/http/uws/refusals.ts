import type { TransportFailure } from '../types.js';

/**
 * Whether the connection ends after the adapter's own refusal of a request (`Connection: close`, then uWS closes it
 * once the answer is written).
 *
 * An over-long URL (414 URI_TOO_LONG) or oversized header fields (431 HEADERS_TOO_LARGE) end it, as nginx does for an
 * oversized request head: a client that sent one is unlikely to send a sane next request on the same connection. The
 * answer itself is the JSON error envelope every other error uses (the code names the limit, and the envelope is what
 * docs/security.md promises for these limits); the bare status is for parameter errors of binary endpoints, and this
 * refusal comes before the request is routed.
 *
 * 413 PAYLOAD_TOO_LARGE (a declared body over the limit) keeps the connection: its body may still be arriving, and
 * closing a socket with unread data resets it, so the client could lose the answer.
 *
 * These limits only apply to requests uWS has parsed. Past its own compiled-in limits (a request line and headers over
 * 4 KiB arriving in more than one read, over about 127 KiB at all, or more than 48 header fields) the installed build
 * closes the connection without an answer and never calls the app; it does not read UWS_HTTP_MAX_HEADERS_SIZE (see
 * docs/security.md, "Request size limits").
 */
export const closesConnection = (code: TransportFailure): boolean =>
  code === 'URI_TOO_LONG' || code === 'HEADERS_TOO_LARGE';
