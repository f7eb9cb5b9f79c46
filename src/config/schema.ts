/** JSON Schema of the config file (published in the README); unknown keys are rejected so typos surface. */
const int = (minimum: number, maximum?: number) => ({ type: 'integer', minimum, ...(maximum ? { maximum } : {}) });
const obj = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, properties });
const pool = obj({ concurrency: int(1, 4096), queue: int(0, 100_000) });
const lane = { queue: int(0, 1_000_000), wait_ms: int(10, 600_000) };

export const CONFIG_SCHEMA = obj({
  $schema: { type: 'string' },
  data_dir: { type: 'string', minLength: 1 },
  host: { type: 'string', minLength: 1 },
  port: int(0, 65535),
  public_url: { type: 'string', pattern: '^(https?://[^\\s]+[^/\\s])?$' },
  tls: obj({ cert: { type: 'string' }, key: { type: 'string' } }),
  engine_enabled: { type: 'boolean' },
  console: obj({ enabled: { type: 'boolean' } }),
  features: obj({
    autocomplete: { type: 'boolean' },
    geocode: { type: 'boolean' },
    reverse: { type: 'boolean' },
    place: { type: 'boolean' },
  }),
  http: obj({
    body_limit_bytes: int(1024, 64 * 1024 * 1024),
    request_timeout_ms: int(10, 600_000),
    cors_origins: { type: 'array', items: { type: 'string', minLength: 1 } },
    trusted_proxy_header: { type: 'string', pattern: '^[A-Za-z0-9-]*$' },
    country_header: { type: 'string', pattern: '^[A-Za-z0-9-]*$' },
    shutdown_grace_ms: int(0, 600_000),
  }),
  auth: obj({
    jwt_secret: { type: 'string' },
    tile_token_ttl_s: int(60, 30 * 86400),
    key_cache_ttl_s: int(0, 3600),
  }),
  limits: obj({
    default_per_minute: int(1),
    default_daily: int(1),
    default_plan: { type: 'string', minLength: 1, maxLength: 64 },
    jwt_per_minute: int(1),
    tile_ip_per_minute: int(1),
  }),
  pools: obj({ autocomplete: pool, geocode: pool, reverse: pool, place: pool, directions: pool }),
  prefetch: obj({ concurrency: int(1, 1024), timeout_ms: int(100, 600_000) }),
  places: obj({ default_max_wait_ms: int(200, 10_000), threads: int(0, 256), queue: int(0, 100_000) }),
  cache: obj({ memory_bytes: int(1024 * 1024) }),
  metrics: obj({ port: int(0, 65535), host: { type: 'string', minLength: 1 } }),
  log: obj({ requests: { type: 'boolean' } }),
  cluster: obj({
    postgres_url: { type: 'string', pattern: '^((postgres|postgresql)://\\S+)?$' },
    redis_url: { type: 'string', pattern: '^((redis|rediss)://\\S+)?$' },
    pool_size: int(1, 1000),
    poll_ms: int(50, 60_000),
    tile_token_secret: { type: 'string', pattern: '^([0-9a-fA-F]{64,})?$' },
  }),
  admission: obj({
    interactive: obj(lane),
    batch: obj(lane),
    staticmap: obj({ concurrency: int(0, 4096), ...lane }),
  }),
  routing: obj({
    engine: { enum: ['builtin', 'osrm', 'valhalla', 'graphhopper'] },
    upstream_url: { type: 'string', pattern: '^(https?://[^\\s]+)?$' },
    timeout_ms: int(100, 120_000),
    snap_max_m: int(10, 50_000),
    threads: int(0, 256),
    queue: int(0, 100_000),
    share_paths: { type: 'boolean' },
    warm_routes: int(0, 100_000),
    inline_max_km: int(0, 1000),
  }),
  tiles: obj({
    origin: { enum: ['render', 'xyz', 'mbtiles', 'none'] },
    xyz_url: { type: 'string', pattern: '^(https?://\\S*\\{z\\}\\S*\\{x\\}\\S*\\{y\\}\\S*)?$' },
    user_agent: { type: 'string', minLength: 1, maxLength: 256 },
    timeout_ms: int(100, 120_000),
    retries: int(0, 10),
    concurrency: int(1, 256),
    prefetch_concurrency: int(1, 64),
    mbtiles_path: { type: 'string' },
    store: { type: 'boolean' },
    render_threads: int(0, 64),
  }),
});
