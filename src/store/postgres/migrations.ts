/** PostgreSQL schema migrations, applied in order; index + 1 is the version recorded in svcmaps_schema. */
export const PG_MIGRATIONS: string[] = [
  // 1: keys, usage, and jwt_sessions: the durable record of JWT sessions and supersede without Redis (sessions.ts).
  `
  CREATE SEQUENCE api_keys_change_seq;
  CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE,      -- SHA-256 hex of the full key; the key itself is never stored
    key_prefix  TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    plan        TEXT NOT NULL,
    role        TEXT NOT NULL DEFAULT 'user',
    scopes      TEXT NOT NULL DEFAULT 'maps',
    per_minute  BIGINT NOT NULL,
    daily       BIGINT NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  BIGINT NOT NULL,           -- Unix seconds
    expires_at  BIGINT,
    revoked_at  BIGINT,
    change_seq  BIGINT NOT NULL DEFAULT nextval('api_keys_change_seq')  -- every write takes a new value
  );
  CREATE INDEX api_keys_change ON api_keys (change_seq);
  CREATE TABLE usage (
    key_id    TEXT NOT NULL,
    day       TEXT NOT NULL,               -- YYYY-MM-DD, UTC
    bucket    TEXT NOT NULL,               -- gather | tiles | tile_family
    requests  BIGINT NOT NULL DEFAULT 0,
    misses    BIGINT NOT NULL DEFAULT 0,
    last_seen BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day, bucket)
  );
  CREATE TABLE jwt_sessions (
    sub  TEXT NOT NULL,
    sid  TEXT NOT NULL,
    rank BIGINT NOT NULL,
    exp  BIGINT NOT NULL,
    PRIMARY KEY (sub, sid)
  );
  `,
  // 2: settings every node shares, one row each; the first is the tile-token secret (src/store/postgres/settings.ts).
  `
  CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
];
