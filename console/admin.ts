import { api } from './api.js';
import { h } from './dom.js';
import { currentLang, t } from './i18n.js';

interface KeyView {
  id: string;
  name: string;
  prefix: string;
  plan: string;
  role: string;
  per_minute: number;
  daily: number;
  state: string;
  created_at: string;
}

interface QuotaRow {
  id: string;
  name: string;
  requests: number;
  daily: number;
  per_minute: number;
  used: number;
  buckets: Record<'gather' | 'tiles' | 'tile_family', { requests: number; misses: number }>;
  last_seen: string | null;
}

interface Status {
  uptime_s: number;
  health: { postgres: string; redis: string; svc_wired: boolean };
  places: { places: number; sources: Array<{ source: string; rows: number; imported_at: string }> } | null;
  roads: { nodes?: number; edges?: number; source?: string } | null;
  render: unknown;
  tiles: Array<{ file: string; bytes: number }>;
}

/** The admin view for a super_admin key: keys (create, shown once; revoke), today's usage, server status. */
export class AdminView {
  constructor(
    private readonly root: HTMLElement,
    private readonly fail: (e: unknown) => void,
  ) {}

  /** Whether the signed-in key may use the admin routes (a user key gets INSUFFICIENT_ROLE). */
  static async allowed(): Promise<boolean> {
    try {
      await api('GET', '/admin/keys');
      return true;
    } catch {
      return false;
    }
  }

  async refresh(created?: KeyView & { key: string }): Promise<void> {
    try {
      const [keys, usage, status] = await Promise.all([
        api<{ keys: KeyView[] }>('GET', '/admin/keys'),
        api<{ day: string; keys: QuotaRow[] }>('GET', '/admin/usage'),
        api<Status>('GET', '/admin/status'),
      ]);
      this.render(keys.keys, usage, status, created);
    } catch (e) {
      this.fail(e);
    }
  }

  private render(
    keys: KeyView[],
    usage: { day: string; keys: QuotaRow[] },
    status: Status,
    created?: KeyView & { key: string },
  ): void {
    const n = new Intl.NumberFormat(currentLang());
    const pct = new Intl.NumberFormat(currentLang(), { style: 'percent', maximumFractionDigits: 1 });
    const nameIn = h('input', { id: 'new-key-name', type: 'text', maxlength: '200' });
    const roleIn = h(
      'select',
      { id: 'new-key-role' },
      h('option', { value: 'user' }, 'user'),
      h('option', { value: 'super_admin' }, 'super_admin'),
    );
    const form = h(
      'form',
      {
        class: 'create',
        onsubmit: (e) => {
          e.preventDefault();
          void api<{ key: KeyView & { key: string } }>('POST', '/admin/keys', {
            name: nameIn.value,
            role: roleIn.value,
          })
            .then((r) => this.refresh(r.key))
            .catch((err: unknown) => this.fail(err));
        },
      },
      h('label', { for: 'new-key-name' }, t('name')),
      nameIn,
      h('label', { for: 'new-key-role' }, t('role')),
      roleIn,
      h('button', { type: 'submit' }, t('create')),
    );
    const th = (k: Parameters<typeof t>[0]) => h('th', { scope: 'col' }, t(k));
    const keyRows = keys.map((k) =>
      h(
        'tr',
        { 'data-key-id': k.id },
        h('td', {}, k.name || '—'),
        h('td', {}, h('code', {}, `${k.prefix}…`)),
        h('td', {}, k.role),
        h('td', {}, k.plan),
        h('td', {}, n.format(k.per_minute)),
        h('td', {}, n.format(k.daily)),
        h('td', { class: `state-${k.state}` }, k.state),
        h(
          'td',
          {},
          k.state === 'revoked'
            ? ''
            : h(
                'button',
                {
                  type: 'button',
                  'aria-label': `${t('revokeOf')} ${k.name || k.prefix}`,
                  onclick: () =>
                    void api('DELETE', `/admin/keys/${encodeURIComponent(k.id)}`)
                      .then(() => this.refresh())
                      .catch((err: unknown) => this.fail(err)),
                },
                t('revoke'),
              ),
        ),
      ),
    );
    const usageRows = usage.keys.map((u) =>
      h(
        'tr',
        {},
        h('td', {}, u.name || u.id),
        h('td', {}, n.format(u.requests)),
        h('td', {}, `${n.format(u.buckets.gather.misses)} / ${n.format(u.buckets.tiles.misses)}`),
        h('td', {}, `${pct.format(u.used)} (${n.format(u.daily)})`),
        h('td', {}, u.last_seen ?? '—'),
      ),
    );
    const st = status;
    this.root.replaceChildren(
      h('h2', { id: 'admin-title' }, t('keys')),
      ...(created
        ? [
            h(
              'div',
              { class: 'new-key', role: 'status' },
              h('p', {}, t('newKey')),
              h('output', { id: 'new-key-value' }, created.key),
            ),
          ]
        : []),
      form,
      h(
        'table',
        { class: 'keys' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            th('name'),
            h('th', { scope: 'col' }, 'ID'),
            th('role'),
            th('plan'),
            th('perMinute'),
            th('daily'),
            th('state'),
            h('td', {}),
          ),
        ),
        h('tbody', {}, ...keyRows),
      ),
      h('h2', {}, `${t('usage')} (${usage.day} UTC)`),
      h(
        'table',
        { class: 'usage' },
        h('thead', {}, h('tr', {}, th('name'), th('requests'), th('misses'), th('used'), th('lastSeen'))),
        h('tbody', {}, ...usageRows),
      ),
      h('h2', {}, t('status')),
      h(
        'dl',
        { class: 'status' },
        h('dt', {}, 'uptime'),
        h('dd', {}, `${n.format(st.uptime_s)} s`),
        h('dt', {}, 'store / cache'),
        h('dd', {}, `${st.health.postgres} / ${st.health.redis}`),
        h('dt', {}, 'places'),
        h(
          'dd',
          {},
          st.places ? `${n.format(st.places.places)} (${st.places.sources.map((x) => x.source).join(', ')})` : '—',
        ),
        h('dt', {}, 'roads'),
        h('dd', {}, st.roads ? `${n.format(st.roads.nodes ?? 0)} nodes, ${n.format(st.roads.edges ?? 0)} edges` : '—'),
        h('dt', {}, 'render'),
        h('dd', {}, st.render ? 'imported' : 'basemap only'),
        h('dt', {}, 'tiles'),
        h('dd', {}, st.tiles.map((x) => `${x.file.split('/').pop()} ${n.format(x.bytes)} B`).join(', ') || '—'),
      ),
      h('button', { type: 'button', onclick: () => void this.refresh() }, t('refresh')),
    );
  }
}
