/** Schema migrations, applied in order; index + 1 is the database's user_version after each one. */
export const MIGRATIONS: string[] = [
  `
  CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE,      -- SHA-256 hex of the full key; the key itself is never stored
    key_prefix  TEXT NOT NULL,             -- first characters, so operators can recognise a key
    name        TEXT NOT NULL DEFAULT '',
    plan        TEXT NOT NULL,
    role        TEXT NOT NULL DEFAULT 'user',
    scopes      TEXT NOT NULL DEFAULT 'maps',
    per_minute  INTEGER NOT NULL,
    daily       INTEGER NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  INTEGER NOT NULL,          -- Unix seconds
    expires_at  INTEGER,
    revoked_at  INTEGER
  );
  CREATE TABLE usage (
    key_id   TEXT NOT NULL,
    day      TEXT NOT NULL,                -- YYYY-MM-DD, UTC
    bucket   TEXT NOT NULL,                -- gather | tiles | tile_family
    requests INTEGER NOT NULL DEFAULT 0,
    misses   INTEGER NOT NULL DEFAULT 0,
    last_seen INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, day, bucket)
  ) WITHOUT ROWID;
  CREATE TABLE jwt_sessions (
    sub  TEXT NOT NULL,
    sid  TEXT NOT NULL,
    rank INTEGER NOT NULL,                 -- iat when the token has one, else first sighting
    exp  INTEGER NOT NULL,
    PRIMARY KEY (sub, sid)
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE answer_cache (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,              -- JSON answer
    created_at INTEGER NOT NULL            -- Unix seconds
  ) WITHOUT ROWID;
  CREATE INDEX answer_cache_age ON answer_cache (created_at);
  `,
];
