import { randomBytes } from 'node:crypto';
import type { SecretResult } from '../data-dir.js';
import type { PgPool } from './pool.js';

const TILE_SECRET = 'tile_token_secret';
const HEX_SECRET = /^[0-9a-f]{64,}$/i;

/**
 * The tile-token secret of the cluster, one row in `settings`: the first node to ask writes its offer (its own
 * tile-token.secret, or fresh random bytes), and every node, that one included, reads back whatever won, so a token
 * minted on one node verifies on every other. A row that is not a 256-bit hex secret is refused (fail closed); a
 * PostgreSQL fault throws.
 */
export async function sharedTileSecret(pool: PgPool, offer: Buffer | undefined): Promise<SecretResult> {
  const proposed = (offer && offer.length >= 32 ? offer : randomBytes(32)).toString('hex');
  await pool.query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    TILE_SECRET,
    proposed,
  ]);
  const r = await pool.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [TILE_SECRET]);
  const hex = r.rows[0]?.value ?? '';
  if (!HEX_SECRET.test(hex))
    return { ok: false, reason: `PostgreSQL settings row ${TILE_SECRET} is not a 256-bit hex secret` };
  return { ok: true, secret: Buffer.from(hex, 'hex') };
}
