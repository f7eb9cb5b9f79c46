/**
 * The one error catalogue: every machine code the service can answer, with its HTTP status and Retry-After.
 * Built from the spec's Errors table; the few codes below the "beyond the spec" line cover HTTP-level cases the
 * spec leaves open (unknown route, wrong method, oversized body, role check, unexpected failure).
 */
export interface ErrorSpec {
  status: number;
  message: string;
  retryAfter?: number;
}

const spec = (status: number, message: string, retryAfter?: number): ErrorSpec => ({ status, message, retryAfter });

export const ERRORS = {
  MISSING_TOKEN: spec(401, 'Authentication required: send an X-API-Key header'),
  INVALID_API_KEY: spec(401, 'The API key is unknown, malformed or revoked'),
  API_KEY_EXPIRED: spec(401, 'The API key is inactive or past its expiry'),
  MAPS_AUTH_UNAVAILABLE: spec(503, 'Authentication is not available on this server'),
  AUTH_REQUIRED: spec(401, 'Authentication required: send an X-API-Key header or a ?t= tile token'),
  INVALID_TOKEN: spec(401, 'The token is malformed or its signature does not match'),
  TOKEN_EXPIRED: spec(401, 'The token has expired; mint a new one'),
  TOKEN_NOT_KEY_BOUND: spec(401, 'The token was not minted from an API key'),
  API_KEY_REVOKED: spec(401, 'The API key behind this token is no longer active'),
  SESSION_SUPERSEDED: spec(401, 'This session was replaced by a newer one'),
  RATE_LIMIT_EXCEEDED: spec(429, 'Rate limit exceeded; retry after the indicated delay'),
  MAPS_QUOTA_EXCEEDED: spec(429, 'Daily quota exhausted for this key; it resets at midnight UTC', 3600),
  VALIDATION_ERROR: spec(400, 'The request is invalid'),
  SAME_POINT: spec(400, 'Origin and destination are the same point'),
  TOO_MANY_WAYPOINTS: spec(400, 'At most 4 waypoints are allowed'),
  BAD_WAYPOINT: spec(400, 'A waypoint is out of range, not a finite number, or (0,0)'),
  ENRICH_MANEUVERS_UNSUPPORTED: spec(400, 'enrich_maneuvers must be false'),
  MISSING_ID: spec(400, 'The place ID is empty'),
  BAD_PLACE_ID: spec(400, 'The place ID matches no known place-ID shape'),
  MISSING_COORDS: spec(400, 'lat and lng are required numbers'),
  MAPS_UNAVAILABLE: spec(503, 'The maps engine is not enabled on this server'),
  AUTOCOMPLETE_BACKPRESSURE: spec(503, 'Autocomplete is busy; retry shortly', 3),
  GEOCODE_BACKPRESSURE: spec(503, 'Geocoding is busy; retry shortly', 3),
  PLACE_BACKPRESSURE: spec(503, 'Place details are busy; retry shortly', 3),
  REVERSE_BACKPRESSURE: spec(503, 'Reverse geocoding is busy; retry shortly', 2),
  DIRECTIONS_BACKPRESSURE: spec(503, 'Routing is busy; retry shortly', 5),
  AUTOCOMPLETE_UNAVAILABLE: spec(503, 'Autocomplete is unavailable', 5),
  GEOCODE_UNAVAILABLE: spec(503, 'Geocoding is unavailable', 5),
  REVERSE_UNAVAILABLE: spec(503, 'Reverse geocoding is unavailable', 5),
  PLACE_UNAVAILABLE: spec(503, 'Place details are unavailable', 5),
  AUTOCOMPLETE_DISABLED: spec(503, 'Autocomplete is disabled on this server'),
  GEOCODE_DISABLED: spec(503, 'Geocoding is disabled on this server'),
  REVERSE_DISABLED: spec(503, 'Reverse geocoding is disabled on this server'),
  PLACE_DISABLED: spec(503, 'Place details are disabled on this server'),
  AUTOCOMPLETE_FAILED: spec(502, 'Autocomplete failed'),
  GEOCODE_FAILED: spec(502, 'Geocoding failed'),
  REVERSE_FAILED: spec(502, 'Reverse geocoding failed'),
  PLACE_FAILED: spec(502, 'Place details failed'),
  DIRECTIONS_UNROUTABLE: spec(422, 'No route exists between these points'),
  VECTOR_TILES_NOT_SUPPORTED: spec(501, 'Vector tiles are not offered; use the raster tiles'),
  TILE_TOKEN_FAILED: spec(500, 'Tile token minting failed'),
  REQUEST_TIMEOUT: spec(504, 'The request took too long'),
  // Beyond the spec: HTTP-level cases it leaves open.
  NOT_FOUND: spec(404, 'No such route'),
  METHOD_NOT_ALLOWED: spec(405, 'Method not allowed on this route'),
  PAYLOAD_TOO_LARGE: spec(413, 'The request body is larger than the limit'),
  URI_TOO_LONG: spec(414, 'The URL is longer than the limit (8 KiB)'),
  HEADERS_TOO_LARGE: spec(431, 'The request header fields are larger than the limit (8 KiB, 40 fields)'),
  INSUFFICIENT_ROLE: spec(403, 'This route requires the super_admin role'),
  KEY_NOT_FOUND: spec(404, 'No API key with this id'),
  PLACE_NOT_FOUND: spec(404, 'No place with this ID'),
  RENDER_FAILED: spec(502, 'Rendering failed'),
  TILE_DEGRADED: spec(503, 'Only a degraded stand-in tile is available'),
  TILE_ORIGIN_FAILED: spec(502, 'The tile origin failed; retry shortly', 1),
  TILE_ORIGIN_TIMEOUT: spec(504, 'The tile origin timed out; retry shortly', 1),
  // Admission control on the render paths: the spec's saturated-pool pattern (bare 503 with Retry-After). A refusal
  // sets its Retry-After from the predicted wait (limits/admission.ts); these values are the fallback.
  TILE_BACKPRESSURE: spec(503, 'The renderer is busy; retry shortly', 1),
  RENDER_BACKPRESSURE: spec(503, 'The static map renderer is busy; retry shortly', 2),
  INTERNAL_ERROR: spec(500, 'An internal error occurred. Please try again later.'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** Generic text every 5xx body carries instead of anything internal. */
export const GENERIC_5XX_MESSAGE = 'An internal error occurred. Please try again later.';

/** A failure with a catalogue code. Services throw these; HTTP renders them once. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message?: string,
    opts: { retryAfter?: number; details?: Record<string, unknown> } = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.code = code;
    this.retryAfter = opts.retryAfter ?? ERRORS[code].retryAfter;
    this.details = opts.details;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/**
 * The code of a Node system error (`ENOENT`, `EACCES`, ...), or undefined for any other value. os.setPriority and
 * other libuv calls throw a SystemError whose own code is ERR_SYSTEM_ERROR and whose errno name is in `info.code`.
 */
function errnoCode(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const err = e as Error & { code?: unknown; info?: { code?: unknown } };
  const code = err.code === 'ERR_SYSTEM_ERROR' ? err.info?.code : err.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether `e` is a Node system error with one of these codes: a catch that expects one checks it with this. */
export const isErrno = (e: unknown, ...codes: string[]): boolean => {
  const code = errnoCode(e);
  return code !== undefined && codes.includes(code);
};
