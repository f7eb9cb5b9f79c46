import { api, ApiError } from './api.js';
import { fmtBytes, fmtDuration, h } from './dom.js';
import { currentLang, t } from './i18n.js';
import { keyForm, type CreatedKey } from './key-form.js';

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
  expires_at: string | null;
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

interface HotKind {
  hits: number;
  misses: number;
  hit_rate: number | null;
  entries: number;
  bytes: number;
}

/** GET /admin/status (shape in the README, "Console"). */
interface Status {
  uptime_s: number;
  health: { postgres: string; redis: string; svc_wired: boolean };
  hot_tier: { capacity_bytes: number; bytes: number; entries: number; tiles: HotKind; answers: HotKind };
  places: { places: number; sources: Array<{ source: string; rows: number; imported_at: string }> } | null;
  roads: { bytes: number; nodes?: number; edges?: number; source?: string; built_at?: string } | null;
  render: { bytes: number; meta: Record<string, string> } | null;
  tiles: Array<{ file: string; scale: number; bytes: number; zooms: Array<{ z: number; tiles: number }> }>;
}

/** The server status: uptime, the hot tier's hit rates and fill, and the data the server has. */
function statusView(st: Status): HTMLElement[] {
  const lang = currentLang();
  const n = new Intl.NumberFormat(lang);
  const pct = new Intl.NumberFormat(lang, { style: 'percent', maximumFractionDigits: 1 });
  const date = (iso: string | undefined) => {
    const d = iso ? new Date(iso) : undefined;
    return d && !Number.isNaN(d.getTime())
      ? new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(d)
      : '';
  };
  const hot = st.hot_tier;
  const th = (k: Parameters<typeof t>[0]) => h('th', { scope: 'col' }, t(k));
  const hotRow = (k: 'tilesCache' | 'answersCache', c: HotKind, id: string) =>
    h(
      'tr',
      { id },
      h('th', { scope: 'row' }, t(k)),
      h('td', { class: 'rate' }, c.hit_rate === null ? '—' : pct.format(c.hit_rate)),
      h('td', {}, n.format(c.hits)),
      h('td', {}, n.format(c.misses)),
      h('td', {}, n.format(c.entries)),
      h('td', {}, fmtBytes(c.bytes, lang)),
    );
  const roads = st.roads;
  const render = st.render;
  return [
    h('h2', { id: 'status-title' }, t('status')),
    h(
      'dl',
      { class: 'status' },
      h('dt', {}, t('uptime')),
      h('dd', { id: 'uptime' }, fmtDuration(st.uptime_s, lang)),
      h('dt', {}, t('health')),
      h('dd', {}, `${st.health.postgres} / ${st.health.redis}`),
    ),
    h(
      'table',
      { class: 'hot', id: 'hot-tier' },
      h('caption', {}, t('hotTier')),
      h(
        'thead',
        {},
        h('tr', {}, th('cache'), th('hitRate'), th('hits'), th('lookupsMissed'), th('entries'), th('size')),
      ),
      h('tbody', {}, hotRow('tilesCache', hot.tiles, 'hot-tiles'), hotRow('answersCache', hot.answers, 'hot-answers')),
      h(
        'tfoot',
        {},
        h(
          'tr',
          { id: 'hot-total' },
          h('th', { scope: 'row' }, t('hotTotal')),
          h('td', { colspan: '3' }, ''),
          h('td', {}, n.format(hot.entries)),
          h(
            'td',
            {},
            `${fmtBytes(hot.bytes, lang)} ${t('ofCapacity')} ${fmtBytes(hot.capacity_bytes, lang)} ` +
              `(${pct.format(hot.capacity_bytes ? hot.bytes / hot.capacity_bytes : 0)})`,
          ),
        ),
      ),
    ),
    h('h3', {}, t('dataLoaded')),
    h(
      'dl',
      { class: 'data' },
      h('dt', {}, t('roadGraph')),
      h(
        'dd',
        { id: 'data-roads' },
        roads
          ? `${n.format(roads.nodes ?? 0)} ${t('nodes')}, ${n.format(roads.edges ?? 0)} ${t('edges')}` +
              (roads.built_at ? `; ${t('builtAt')} ${date(roads.built_at)}` : '') +
              ` (${fmtBytes(roads.bytes, lang)})`
          : t('none'),
      ),
      h('dt', {}, t('places')),
      h(
        'dd',
        { id: 'data-places' },
        st.places ? `${n.format(st.places.places)} (${st.places.sources.map((x) => x.source).join(', ')})` : t('none'),
      ),
      h('dt', {}, t('renderData')),
      h(
        'dd',
        { id: 'data-render' },
        render
          ? [render.meta.source, date(render.meta.imported_at), fmtBytes(render.bytes, lang)]
              .filter(Boolean)
              .join(' · ')
          : t('basemapOnly'),
      ),
      h('dt', {}, t('mbtiles')),
      h(
        'dd',
        { id: 'data-mbtiles' },
        st.tiles
          .map((x) => {
            const count = x.zooms.reduce((a, z) => a + z.tiles, 0);
            return `${x.file.split('/').pop()}: ${n.format(count)} ${t('tilesCount')}, ${fmtBytes(x.bytes, lang)}`;
          })
          .join('; ') || t('none'),
      ),
    ),
  ];
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
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) return false; // a user key: INSUFFICIENT_ROLE
      console.warn('admin check failed; the admin tab stays hidden', e);
      return false;
    }
  }

  async refresh(created?: CreatedKey): Promise<void> {
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
    created?: CreatedKey,
  ): void {
    const n = new Intl.NumberFormat(currentLang());
    const pct = new Intl.NumberFormat(currentLang(), { style: 'percent', maximumFractionDigits: 1 });
    const form = keyForm(
      (k) => void this.refresh(k),
      (e) => this.fail(e),
    );
    const when = new Intl.DateTimeFormat(currentLang(), { dateStyle: 'medium', timeStyle: 'short' });
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
        h('td', {}, k.expires_at ? when.format(new Date(k.expires_at)) : t('never')),
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
    this.root.replaceChildren(
      h('h2', { id: 'admin-title' }, t('keys')),
      ...(created
        ? [
            h(
              'div',
              { class: 'new-key', role: 'status' },
              h('p', {}, t('newKey')),
              h('output', { id: 'new-key-value', tabindex: '-1' }, created.key),
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
            th('expiresAt'),
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
      ...statusView(status),
      h('button', { type: 'button', onclick: () => void this.refresh() }, t('refresh')),
    );
    // The key is shown once: take the keyboard (and a screen reader's reading point) to it.
    if (created) this.root.querySelector<HTMLElement>('#new-key-value')?.focus();
  }
}
