/** Who a request is from, once authenticated. Limits, metering and role checks read this and nothing else. */
export interface Caller {
  kind: 'key' | 'jwt';
  /** Metering and rate-limit identity: the key id, or `jwt:<sub>`. */
  id: string;
  /** Set when the caller is an API key (directly or through a tile token minted from it). */
  keyId?: string;
  role: string;
  plan: string;
  perMinute: number;
  daily: number;
  /** How the credential arrived; tile tokens skip per-key limits (the tile family is capped per IP). */
  via: 'header' | 'bearer' | 'tile_token';
}

export const SUPER_ADMIN = 'super_admin';
