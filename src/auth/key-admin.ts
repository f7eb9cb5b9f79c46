import { AppError } from '../core/errors.js';
import type { KeyRow, KeysRepo, NewKeyRow } from '../store/keys-repo.js';
import { generateKey, generateKeyId, hashKey, keyState, type KeyState } from './api-keys.js';
import type { KeyEvents, KeyStore } from './ports.js';

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

function viewKey(row: KeyRow, nowS: number): KeyView {
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

/** A new key and the row that stores it (by hash). */
function newKey(input: CreateKeyInput, now: number): { key: string; row: NewKeyRow } {
  const key = generateKey();
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
  return { key, row };
}

/** Key administration as the admin routes see it: the same answers, synchronous or not. */
export interface KeyAdminApi {
  create(input: CreateKeyInput): (KeyView & { key: string }) | Promise<KeyView & { key: string }>;
  list(): KeyView[] | Promise<KeyView[]>;
  show(id: string): KeyView | Promise<KeyView>;
  revoke(id: string): KeyView | Promise<KeyView>;
}

/** Key lifecycle for the CLI and the admin route: create (returns the key once), list, show, revoke. */
export class KeyAdmin implements KeyAdminApi {
  constructor(
    private readonly repo: KeysRepo,
    private readonly nowS: () => number,
  ) {}

  create(input: CreateKeyInput): KeyView & { key: string } {
    const { key, row } = newKey(input, this.nowS());
    this.repo.insert(row);
    return { ...viewKey({ ...row, active: 1, revoked_at: null }, row.created_at), key };
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

/**
 * Key lifecycle over a shared store (PostgreSQL): every write reaches the store before it is answered, and every
 * change is announced so the other nodes drop their cached state for the key at once.
 */
export class SharedKeyAdmin implements KeyAdminApi {
  constructor(
    private readonly store: KeyStore,
    private readonly events: KeyEvents | undefined,
    private readonly nowS: () => number,
  ) {}

  async create(input: CreateKeyInput): Promise<KeyView & { key: string }> {
    const { key, row } = newKey(input, this.nowS());
    await this.store.insert(row);
    await this.events?.publishChanged(row.id);
    return { ...viewKey({ ...row, active: 1, revoked_at: null }, row.created_at), key };
  }

  async list(): Promise<KeyView[]> {
    const now = this.nowS();
    return (await this.store.list()).map((r) => viewKey(r, now));
  }

  async show(id: string): Promise<KeyView> {
    const row = this.store.fetchById ? await this.store.fetchById(id) : this.store.findById(id);
    if (!row) throw new AppError('KEY_NOT_FOUND', `No API key with id ${id}`);
    return viewKey(row, this.nowS());
  }

  async revoke(id: string): Promise<KeyView> {
    if (!(await this.store.revoke(id, this.nowS()))) throw new AppError('KEY_NOT_FOUND', `No API key with id ${id}`);
    await this.events?.publishChanged(id);
    return this.show(id);
  }
}
