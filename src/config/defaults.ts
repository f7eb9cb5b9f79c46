/** Named defaults for every operator-configurable value. */
interface PoolConfig {
  concurrency: number;
  queue: number;
}

export interface Config {
  data_dir: string;
  host: string;
  port: number;
  public_url: string;
  tls: { cert: string; key: string };
  engine_enabled: boolean;
  /** The web console at / and /console/ (static files from dist/console). */
  console: { enabled: boolean };
  features: { autocomplete: boolean; geocode: boolean; reverse: boolean; place: boolean };
  http: {
    body_limit_bytes: number;
    request_timeout_ms: number;
    cors_origins: string[];
    trusted_proxy_header: string;
    country_header: string;
    /** On SIGTERM, how long in-flight requests may take to finish before the store is closed anyway. */
    shutdown_grace_ms: number;
  };
  auth: {
    jwt_secret: string;
    tile_token_ttl_s: number;
    key_cache_ttl_s: number;
  };
  limits: {
    default_per_minute: number;
    default_daily: number;
    default_plan: string;
    jwt_per_minute: number;
    tile_ip_per_minute: number;
  };
  pools: {
    autocomplete: PoolConfig;
    geocode: PoolConfig;
    reverse: PoolConfig;
    place: PoolConfig;
    directions: PoolConfig;
  };
  prefetch: { concurrency: number; timeout_ms: number };
  places: {
    default_max_wait_ms: number;
    /** Threads places searches and reverse lookups run on (0 = os.availableParallelism()), each with its own connection. */
    threads: number;
    /** Places queries that may wait for a thread; beyond, 503 *_BACKPRESSURE. */
    queue: number;
  };
  cache: { memory_bytes: number };
  tiles: TilesConfig;
  admission: AdmissionConfig;
  routing: RoutingConfig;
  /** Prometheus exposition on a separate admin port; 0 = off (GET /admin/metrics for super_admin keys always works). */
  metrics: { port: number; host: string };
  log: {
    /**
     * One access-log line per request, written asynchronously in batches (src/ops/log.ts). A node whose proxy already
     * keeps an access log can turn it off; 5xx answers and errors are logged either way.
     */
    requests: boolean;
  };
  /**
   * Several nodes sharing state: keys, sessions and daily usage in PostgreSQL, per-minute limits and revocation
   * fan-out in Redis. Both empty = one node on its own SQLite store (the default).
   */
  cluster: ClusterConfig;
}

export interface ClusterConfig {
  /** e.g. postgres://svcmaps:secret@127.0.0.1:5432/svcmaps */
  postgres_url: string;
  /** e.g. redis://127.0.0.1:6379 */
  redis_url: string;
  /** PostgreSQL connections per node. */
  pool_size: number;
  /** How often a node re-reads changed keys from PostgreSQL (also its PostgreSQL health probe). */
  poll_ms: number;
  /**
   * The tile-token signing secret every node shares (64+ hex digits). Empty: generated once into PostgreSQL by the
   * first node (its own tile-token.secret) and read from there by every node.
   */
  tile_token_secret: string;
}

/** Which engine answers directions; see src/routing/. */
export interface RoutingConfig {
  /** builtin = the imported road graph (`<data>/roads.graph`); osrm / valhalla / graphhopper = an upstream server. */
  engine: 'builtin' | 'osrm' | 'valhalla' | 'graphhopper';
  /** Base URL of the upstream engine, e.g. http://localhost:5000 (OSRM), :8002 (Valhalla), :8989 (GraphHopper). */
  upstream_url: string;
  /** Per-query timeout (upstream call, or a built-in query in its routing thread); past it the caller degrades. */
  timeout_ms: number;
  /** Origin or destination farther than this from any drivable road is unroutable (422). */
  snap_max_m: number;
  /** Threads the built-in router queries on (0 = os.availableParallelism()); all share one copy of the graph. */
  threads: number;
  /** Built-in queries that may wait for a routing thread; beyond, 503 DIRECTIONS_BACKPRESSURE. */
  queue: number;
  /** An idle routing thread writes paths of another's answer (routing/threads/route-help.ts); false: each writes its own. */
  share_paths: boolean;
  /** Routes the routing threads answer once everything else is up, before /readyz says ready (0 = none). */
  warm_routes: number;
  /**
   * A single-leg route whose ends are at most this far apart is computed on the HTTP thread while no other request
   * is in flight, rather than handed to a routing thread (routing/threads/route-inline.ts); 0 = always a routing thread.
   */
  inline_max_km: number;
}

/** One admission lane's budget: how many jobs may wait, and how long one may wait to start (0 = sized from the machine). */
interface LaneConfig {
  queue: number;
  wait_ms: number;
}

/**
 * Admission control on the render paths (docs/operations.md, "Bursts: admission control"). Cold tiles and static-map tiles share
 * `tiles.concurrency` origin calls in flight, interactive first; static maps have their own in-flight budget.
 * A 0 count is sized from the machine (os.availableParallelism()).
 */
interface AdmissionConfig {
  /** Cold tiles a person waits for (/tiles without X-Svc-Prefetch). */
  interactive: LaneConfig;
  /** Basemap tiles of static maps, X-Svc-Prefetch tiles. */
  batch: LaneConfig;
  /** Whole static maps: in flight, waiting, and how long one may wait to start. */
  staticmap: LaneConfig & { concurrency: number };
}

/** Where tiles come from and how the origin is called; see src/tiles/. */
interface TilesConfig {
  /** render = built-in renderer; xyz = upstream URL template; mbtiles = another MBTiles file; none = 404 on miss. */
  origin: 'render' | 'xyz' | 'mbtiles' | 'none';
  xyz_url: string;
  user_agent: string;
  timeout_ms: number;
  retries: number;
  concurrency: number;
  prefetch_concurrency: number;
  /** The MBTiles file used as origin when origin = mbtiles. */
  mbtiles_path: string;
  /** Keep stored (warm) tiles in tiles.mbtiles in the data directory; false serves hot tier + origin only. */
  store: boolean;
  /** Threads the built-in renderer draws on (0 = on the event loop, for tests and tiny deployments). */
  render_threads: number;
}

export const DEFAULTS: Config = {
  data_dir: './var/svcmaps',
  host: '127.0.0.1',
  port: 8080,
  public_url: '',
  tls: { cert: '', key: '' },
  engine_enabled: true,
  console: { enabled: true },
  features: { autocomplete: true, geocode: true, reverse: true, place: true },
  http: {
    body_limit_bytes: 1024 * 1024,
    request_timeout_ms: 30_000,
    cors_origins: ['*'],
    trusted_proxy_header: '',
    country_header: '',
    shutdown_grace_ms: 30_000,
  },
  auth: { jwt_secret: '', tile_token_ttl_s: 24 * 3600, key_cache_ttl_s: 30 },
  limits: {
    default_per_minute: 600,
    default_daily: 50_000,
    default_plan: 'standard',
    jwt_per_minute: 1200,
    tile_ip_per_minute: 6000,
  },
  pools: {
    autocomplete: { concurrency: 64, queue: 256 },
    geocode: { concurrency: 32, queue: 128 },
    reverse: { concurrency: 64, queue: 256 },
    place: { concurrency: 32, queue: 128 },
    directions: { concurrency: 8, queue: 64 },
  },
  prefetch: { concurrency: 16, timeout_ms: 20_000 },
  places: { default_max_wait_ms: 2000, threads: 0, queue: 256 },
  cache: { memory_bytes: 256 * 1024 * 1024 },
  metrics: { port: 0, host: '127.0.0.1' },
  log: { requests: true },
  cluster: { postgres_url: '', redis_url: '', pool_size: 10, poll_ms: 250, tile_token_secret: '' },
  routing: {
    engine: 'builtin',
    upstream_url: '',
    timeout_ms: 5000,
    snap_max_m: 1500,
    threads: 0,
    queue: 64,
    share_paths: true,
    warm_routes: 1200,
    inline_max_km: 50,
  },
  admission: {
    interactive: { queue: 0, wait_ms: 5000 },
    batch: { queue: 0, wait_ms: 4000 },
    staticmap: { concurrency: 0, queue: 0, wait_ms: 5000 },
  },
  tiles: {
    origin: 'render',
    xyz_url: '',
    user_agent: 'svcmaps/0.1 (self-hosted maps appliance)',
    timeout_ms: 10_000,
    retries: 2,
    concurrency: 4,
    prefetch_concurrency: 1,
    mbtiles_path: '',
    store: true,
    render_threads: 2,
  },
};
