import { AppError } from '../core/errors.js';
import type { KeyRow, KeysRepo } from '../store/keys-repo.js';
import { generateKey, generateKeyId, hashKey, keyState, type KeyState } from './api-keys.js';

export interface CreateKeyInput {
  name?: string;
  plan: string;
  role?: string;
  perMinute: number;
  daily: number;
  expiresInS?: number;
}

/** What operators see of a key: everything except the secret, which is shown once at creation. */
export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  plan: string;
  role: string;
  scopes: string[];
  per_minute: number;
  daily: number;
  state: KeyState;
  active: boolean;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

const iso = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString());

export function viewKey(row: KeyRow, nowS: number): KeyView {
  const state = keyState(row, nowS);
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    plan: row.plan,
    role: row.role,
    scopes: row.scopes.split(','),
    per_minute: row.per_minute,
    daily: row.daily,
    state,
    active: state === 'active',
    created_at: iso(row.created_at)!,
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
  };
}

/** Key lifecycle for the CLI and the admin route: create (returns the key once), list, show, revoke. */
export class KeyAdmin {
  constructor(
    private readonly repo: KeysRepo,
    private readonly nowS: () => number,
  ) {}

  create(input: CreateKeyInput): KeyView & { key: string } {
    const key = generateKey();
    const now = this.nowS();
    const row = {
      id: generateKeyId(),
      key_hash: hashKey(key),
      key_prefix: key.slice(0, 13),
      name: input.name ?? '',
      plan: input.plan,
      role: input.role ?? 'user',
      scopes: 'maps',
      per_minute: input.perMinute,
      daily: input.daily,
      created_at: now,
      expires_at: input.expiresInS ? now + input.expiresInS : null,
    };
    this.repo.insert(row);
    return { ...viewKey({ ...row, active: 1, revoked_at: null }, now), key };
  }

  list(): KeyView[] {
    const now = this.nowS();
    return this.repo.list().map((r) => viewKey(r, now));
  }

  show(id: string): KeyView {
    const row = this.repo.findById(id);
    if (!row) throw new AppError('KEY_NOT_FOUND', `No API key with id ${id}`);
    return viewKey(row, this.nowS());
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  revoke(id: string): KeyView {
    if (!this.repo.revoke(id, this.nowS())) throw new AppError('KEY_NOT_FOUND', `No API key with id ${id}`);
    return this.show(id);
  }
}
