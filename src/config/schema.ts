/**
 * JSON Schema of the config file (published by `svcmaps config schema`; docs/configuration.md is generated from it);
 * unknown keys are rejected so typos surface. Every key carries a description: the reference page and editors show it.
 */
const int = (minimum: number, maximum: number | undefined, description: string) => ({
  type: 'integer',
  minimum,
  ...(maximum ? { maximum } : {}),
  description,
});
const str = (description: string, rest: Record<string, unknown> = {}) => ({ type: 'string', ...rest, description });
const bool = (description: string) => ({ type: 'boolean', description });
const obj = (description: string, properties: Record<string, unknown>) => ({
  type: 'object',
  additionalProperties: false,
  description,
  properties,
});
const sentence = (text: string) => text[0]!.toUpperCase() + text.slice(1);
const pool = (what: string, code: string) =>
  obj(`Bounded pool of ${what}.`, {
    concurrency: int(1, 4096, `${sentence(what)} answered at once.`),
    queue: int(0, 100_000, `${sentence(what)} that may wait for a slot; one more answers 503 ${code}.`),
  });
const lane = (what: string) => ({
  queue: int(0, 1_000_000, `${sentence(what)} that may wait for a render slot (0 = sized from the machine's cores).`),
  wait_ms: int(
    10,
    600_000,
    `How long ${what} may wait to start; work whose predicted wait is longer is refused on arrival, and queued work is dropped when it passes.`,
  ),
});

export const CONFIG_SCHEMA = obj('svcmaps configuration.', {
  $schema: str('The JSON Schema this file follows (for editors); not read by svcmaps.'),
  data_dir: str('Data directory: keys, usage, imported places, road graph and stored tiles (flag --data).', {
    minLength: 1,
  }),
  host: str('Address the HTTP server binds (flag --host).', { minLength: 1 }),
  port: int(0, 65535, 'Port the HTTP server listens on; 0 picks a free one (flag --port).'),
  public_url: str(
    'Absolute base URL (no trailing slash) used for URLs inside styles, e.g. https://maps.example.com; empty: relative URLs (flag --public-url).',
    { pattern: '^(https?://[^\\s]+[^/\\s])?$' },
  ),
  tls: obj(
    'Native HTTPS. With both files set the server speaks HTTPS itself; otherwise plain HTTP, for a TLS proxy in front (HSTS is sent either way).',
    {
      cert: str('TLS certificate file (PEM) (flag --tls-cert).'),
      key: str('TLS private key file (PEM) (flag --tls-key).'),
    },
  ),
  engine_enabled: bool('false: every /maps/v1 route answers 503 MAPS_UNAVAILABLE; health endpoints still answer.'),
  console: obj('The web console.', {
    enabled: bool(
      'Serve the web console at / and /console/ (static files from dist/console); false: those paths answer 404.',
    ),
  }),
  features: obj('Capabilities that can be switched off one by one; a disabled one answers 503 *_DISABLED.', {
    autocomplete: bool('Autocomplete (search as you type).'),
    geocode: bool('Geocoding (text to places).'),
    reverse: bool('Reverse geocoding (coordinates to places).'),
    place: bool('Place details by id.'),
  }),
  http: obj('The HTTP server.', {
    body_limit_bytes: int(1024, 64 * 1024 * 1024, 'Largest request body; larger ones answer 413 PAYLOAD_TOO_LARGE.'),
    request_timeout_ms: int(10, 600_000, 'Whole-request timeout, body included; past it, 504 REQUEST_TIMEOUT.'),
    cors_origins: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Browser origins allowed to call /maps/v1 (CORS); "*" allows any.',
    },
    trusted_proxy_header: str(
      'Header carrying the client address from a reverse proxy, e.g. X-Forwarded-For: the client address is its last entry (the one the proxy appended). Empty: the peer address.',
      { pattern: '^[A-Za-z0-9-]*$' },
    ),
    country_header: str(
      "Header carrying the caller's country, e.g. CF-IPCountry, used to bias place searches. Empty: the bias is jo.",
      { pattern: '^[A-Za-z0-9-]*$' },
    ),
    shutdown_grace_ms: int(
      0,
      600_000,
      'On SIGTERM, how long in-flight requests may take to finish before the store is closed anyway.',
    ),
  }),
  auth: obj('Authentication: API keys, platform JWTs and tile tokens.', {
    jwt_secret: str(
      'HS256 secret (at least 32 bytes) for platform JWTs; empty or shorter: bearer authentication answers 503 MAPS_AUTH_UNAVAILABLE.',
    ),
    tile_token_ttl_s: int(60, 30 * 86400, 'Lifetime of a tile token, in seconds.'),
    key_cache_ttl_s: int(
      0,
      3600,
      "How long the tile family caches a key's state, in seconds; revoking a key through DELETE /admin/keys/{id} clears it at once.",
    ),
  }),
  limits: obj('Rate limits and quotas.', {
    default_per_minute: int(1, undefined, 'Requests per minute of a new key.'),
    default_daily: int(1, undefined, 'Daily quota (cache misses) per bucket of a new key, and of JWT callers.'),
    default_plan: str('Plan label of a new key.', { minLength: 1, maxLength: 64 }),
    jwt_per_minute: int(1, undefined, 'Requests per minute of each JWT subject.'),
    tile_ip_per_minute: int(
      1,
      undefined,
      'Requests per minute of one client address on the tile family (checked before authentication).',
    ),
  }),
  pools: obj('Bounded pools per capability; requests beyond a full queue are shed with 503 *_BACKPRESSURE.', {
    autocomplete: pool('autocomplete requests', 'AUTOCOMPLETE_BACKPRESSURE'),
    geocode: pool('geocoding requests', 'GEOCODE_BACKPRESSURE'),
    reverse: pool('reverse geocoding requests', 'REVERSE_BACKPRESSURE'),
    place: pool('place lookups', 'PLACE_BACKPRESSURE'),
    directions: pool('directions requests', 'DIRECTIONS_BACKPRESSURE'),
  }),
  prefetch: obj('Background route gathers (prefetch-directions).', {
    concurrency: int(1, 1024, 'Prefetched routes computed at once; more are refused (prefetch_saturated), not queued.'),
    timeout_ms: int(100, 600_000, 'Timeout of each prefetched route leg.'),
  }),
  places: obj('Places: search, geocoding and reverse geocoding.', {
    default_max_wait_ms: int(
      200,
      10_000,
      "Autocomplete's time budget when a request gives no max_wait_ms; past it the answer is budget_expired while the search goes on to warm the cache.",
    ),
    threads: int(
      0,
      256,
      'Threads places searches and reverse lookups run on, each with its own read-only connection (0 = os.availableParallelism()).',
    ),
    queue: int(0, 100_000, 'Places queries that may wait for a thread; beyond, 503 *_BACKPRESSURE.'),
  }),
  cache: obj('The in-memory hot tier, shared by cached answers and tiles.', {
    memory_bytes: int(1024 * 1024, undefined, 'Size of the hot tier (LRU), in bytes.'),
  }),
  metrics: obj(
    'Prometheus exposition on a separate admin port (GET /admin/metrics with a super_admin key works either way).',
    {
      port: int(0, 65535, 'Port of the metrics listener; 0 = off.'),
      host: str('Address the metrics listener binds.', { minLength: 1 }),
    },
  ),
  log: obj('Logging (JSON lines on stderr).', {
    requests: bool(
      'One access-log line per request, written asynchronously in batches. A node whose proxy already keeps an access log can turn it off; 5xx answers and errors are logged either way.',
    ),
  }),
  cluster: obj(
    'Several nodes sharing state: keys, sessions and daily usage in PostgreSQL, per-minute limits and revocation fan-out in Redis. Both URLs empty = one node on its own SQLite store.',
    {
      postgres_url: str('PostgreSQL connection URL, e.g. postgres://svcmaps:secret@127.0.0.1:5432/svcmaps.', {
        pattern: '^((postgres|postgresql)://\\S+)?$',
      }),
      redis_url: str('Redis connection URL, e.g. redis://127.0.0.1:6379.', { pattern: '^((redis|rediss)://\\S+)?$' }),
      pool_size: int(1, 1000, 'PostgreSQL connections per node.'),
      poll_ms: int(
        50,
        60_000,
        'How often a node re-reads changed keys from PostgreSQL (also its PostgreSQL health probe).',
      ),
      tile_token_secret: str(
        'The tile-token signing secret every node shares (64+ hex digits). Empty: generated once into PostgreSQL by the first node and read from there by every node.',
        { pattern: '^([0-9a-fA-F]{64,})?$' },
      ),
    },
  ),
  admission: obj(
    "Admission control on the render paths: cold tiles and static-map tiles share tiles.concurrency origin calls in flight, interactive first; static maps have their own in-flight budget. A 0 count is sized from the machine (os.availableParallelism()); a lane's wait_ms is capped at tiles.timeout_ms.",
    {
      interactive: obj('Cold tiles a person waits for (/tiles without X-Svc-Prefetch).', lane('cold tiles')),
      batch: obj('Basemap tiles of static maps, and X-Svc-Prefetch tiles.', lane('batch tiles')),
      staticmap: obj('Whole static maps: in flight, waiting, and how long one may wait to start.', {
        concurrency: int(0, 4096, 'Static maps drawn at once (0 = twice the cores).'),
        ...lane('static maps'),
      }),
    },
  ),
  routing: obj('Which engine answers directions, and how.', {
    engine: {
      enum: ['builtin', 'osrm', 'valhalla', 'graphhopper'],
      description:
        'builtin = the imported road graph (<data>/roads.graph); osrm, valhalla or graphhopper = an upstream server at upstream_url.',
    },
    upstream_url: str(
      'Base URL of the upstream engine, e.g. http://localhost:5000 (OSRM), http://localhost:8002 (Valhalla), http://localhost:8989 (GraphHopper).',
      { pattern: '^(https?://[^\\s]+)?$' },
    ),
    timeout_ms: int(
      100,
      120_000,
      'Per-query timeout (the upstream call, or a built-in query in its routing thread); past it, or on error, the caller gets the degraded line.',
    ),
    snap_max_m: int(
      10,
      50_000,
      'An origin or destination farther than this from any drivable road is unroutable (422).',
    ),
    threads: int(
      0,
      256,
      'Threads the built-in router queries on, all sharing one copy of the graph (0 = os.availableParallelism()).',
    ),
    queue: int(0, 100_000, 'Built-in queries that may wait for a routing thread; beyond, 503 DIRECTIONS_BACKPRESSURE.'),
    share_paths: bool("An idle routing thread writes paths of another thread's answer; false: each writes its own."),
    warm_routes: int(
      0,
      100_000,
      'Routes the routing threads answer once set up (yielding to real routes), then 2.5 times as many local ones on the HTTP thread (0 = no warm-up).',
    ),
    inline_max_km: int(
      0,
      1000,
      'A single-leg route whose ends are at most this far apart is computed on the HTTP thread while no other request is in flight (0 = always a routing thread).',
    ),
  }),
  tiles: obj('Where tiles come from and how the origin is called.', {
    origin: {
      enum: ['render', 'xyz', 'mbtiles', 'none'],
      description:
        'render = the built-in renderer; xyz = an upstream URL template (xyz_url); mbtiles = another MBTiles file (mbtiles_path); none = stored tiles only (404 on a miss).',
    },
    xyz_url: str(
      'Upstream tile URL template for origin xyz, e.g. https://tiles.example.org/{z}/{x}/{y}{r}.png ({r} becomes @2x or @3x).',
      { pattern: '^(https?://\\S*\\{z\\}\\S*\\{x\\}\\S*\\{y\\}\\S*)?$' },
    ),
    user_agent: str('User-Agent sent upstream; put your contact details in it.', { minLength: 1, maxLength: 256 }),
    timeout_ms: int(100, 120_000, 'How long a request waits for the origin before a stand-in tile or 504.'),
    retries: int(0, 10, 'Upstream retries on 5xx, 429 and network errors (jittered exponential backoff).'),
    concurrency: int(1, 256, 'Origin calls in flight, all admission lanes together.'),
    prefetch_concurrency: int(1, 64, 'Of the origin calls in flight, at most this many for X-Svc-Prefetch requests.'),
    mbtiles_path: str(
      'The MBTiles file used as origin when origin is mbtiles (a name@2x.mbtiles sibling is used for @2x).',
    ),
    store: bool(
      'Keep fresh tiles in the MBTiles files of the data directory (the warm store); false serves the hot tier and the origin only.',
    ),
    render_threads: int(
      0,
      64,
      'Threads the built-in renderer draws on (0 = on the event loop, for tests and tiny deployments).',
    ),
  }),
});
