import type { Map as MlMap } from 'maplibre-gl';
import { AdminView } from './admin.js';
import { api, ApiError, apiKey, clearApiKey, setApiKey } from './api.js';
import { DirectionsPanel, type End } from './directions.js';
import { byId, h } from './dom.js';
import { applyLang, currentLang, errorText, onLangChange, setLang, t } from './i18n.js';
import { createMap, TokenKeeper } from './map.js';
import { mountSearch, type Prediction } from './search.js';

interface Place {
  place_id: string;
  name: string;
  address: string;
  lat: number;
  lng: number;
  category?: string;
  phone?: string;
  website?: string;
  photos?: string[];
  name_localized?: { en?: string; ar?: string };
}

interface Reverse {
  formatted_address: string;
  place_id?: string;
  source: string;
}

const status = byId('status');

/** Shows an API failure as a readable message in the chosen language (never the key, never a stack). */
function showError(e: unknown, where: HTMLElement = status): void {
  const code = e instanceof ApiError ? e.code : 'NETWORK';
  where.textContent = errorText(code, e instanceof ApiError ? e.message : undefined);
  where.dataset.code = code;
}

function clearError(): void {
  status.textContent = '';
  delete status.dataset.code;
}

function langButton(): void {
  const b = byId('lang');
  const ar = currentLang() === 'ar';
  b.textContent = ar ? 'English' : 'العربية';
  b.lang = ar ? 'en' : 'ar';
}

class Workspace {
  private readonly tokens = new TokenKeeper((e) => showError(e));
  private map!: MlMap;
  private dirs!: DirectionsPanel;
  private admin?: AdminView;
  /** Re-renders the details panel (after a language switch). */
  private redetail: (() => void) | undefined;

  async start(): Promise<void> {
    await this.tokens.start();
    byId('signin').hidden = true;
    byId('workspace').hidden = false;
    byId('tabs').hidden = false;
    byId('signout').hidden = false;
    this.map = createMap(byId('map'), this.tokens);
    this.map.on('error', (e: { error?: { status?: number; message?: string } }) => {
      if (e.error?.status === 401) showError(new ApiError(401, 'TOKEN_EXPIRED', ''));
    });
    this.dirs = new DirectionsPanel(this.map, (e) => showError(e));
    const search = mountSearch(byId('search'), {
      bias: () => {
        const c = this.map.getCenter();
        return { lat: c.lat, lng: c.lng };
      },
      choose: (p) => void this.choose(p),
      fail: (e) => showError(e),
    });
    this.map.on('click', (e) => void this.reverse({ lat: e.lngLat.lat, lng: e.lngLat.lng }));
    // The keyboard's way to the same answer: pan with the arrow keys on the map, then ask about its centre.
    byId('centre').addEventListener('click', () => {
      const c = this.map.getCenter();
      void this.reverse({ lat: c.lat, lng: c.lng });
    });
    onLangChange(() => {
      search.relabel();
      this.dirs.relabel();
      this.redetail?.();
      if (this.admin && !byId('admin').hidden) void this.admin.refresh();
    });
    byId('tab-map').addEventListener('click', () => this.tab('map'));
    byId('tab-admin').addEventListener('click', () => this.tab('admin'));
    if (await AdminView.allowed()) {
      this.admin = new AdminView(byId('admin'), (e) => showError(e));
      byId('tab-admin').hidden = false;
    }
  }

  private tab(which: 'map' | 'admin'): void {
    const admin = which === 'admin';
    byId('admin').hidden = !admin;
    byId('panel').hidden = admin;
    byId('map').hidden = admin;
    byId('tab-map').setAttribute('aria-pressed', String(!admin));
    byId('tab-admin').setAttribute('aria-pressed', String(admin));
    if (admin) void this.admin?.refresh();
    else this.map.resize();
  }

  private endButtons(end: End): HTMLElement {
    return h(
      'div',
      { class: 'ends-buttons' },
      h('button', { type: 'button', onclick: () => this.dirs.set('from', end) }, t('fromHere')),
      h('button', { type: 'button', onclick: () => this.dirs.set('to', end) }, t('toHere')),
      h(
        'button',
        {
          type: 'button',
          onclick: () => {
            if (!this.dirs.addStop(end)) status.textContent = t('tooManyStops');
          },
        },
        t('addStop'),
      ),
    );
  }

  private async choose(p: Prediction): Promise<void> {
    const at = { lat: p.lat!, lng: p.lng! };
    // From far away jump (an animated flight asks for every tile along the way); nearby, fly.
    const far = !this.map.getBounds().contains([at.lng, at.lat]) || this.map.getZoom() < 10;
    if (far) this.map.jumpTo({ center: [at.lng, at.lat], zoom: 15 });
    else this.map.flyTo({ center: [at.lng, at.lat], zoom: 15, duration: 800 });
    const show = async () => {
      const q = new URLSearchParams({ lat: String(at.lat), lng: String(at.lng), q: p.name });
      let place: Place;
      try {
        place = await api<Place>('GET', `/maps/v1/place/${encodeURIComponent(p.place_id)}?${q}`);
        clearError();
      } catch (e) {
        showError(e);
        place = { place_id: p.place_id, name: p.name, address: p.address, ...at };
      }
      this.details(place);
    };
    this.redetail = () => void show();
    await show();
  }

  private details(p: Place): void {
    const row = (k: Parameters<typeof t>[0], v: string | Node | undefined) =>
      v ? [h('dt', {}, t(k)), h('dd', {}, v)] : [];
    const photo = p.photos?.[0];
    byId('details').replaceChildren(
      h('h2', { id: 'place-name' }, p.name_localized?.[currentLang()] || p.name),
      ...(photo ? [h('img', { src: photo, alt: `${t('photoOf')} ${p.name}`, class: 'photo' })] : []),
      h(
        'dl',
        {},
        ...row('address', p.address),
        ...row('category', p.category),
        ...row('phone', p.phone),
        ...row('website', p.website ? h('a', { href: p.website, rel: 'noopener noreferrer' }, p.website) : undefined),
      ),
      h('p', { class: 'coords' }, `${p.lat.toFixed(5)}, ${p.lng.toFixed(5)}`),
      this.endButtons({ lat: p.lat, lng: p.lng, name: p.name }),
    );
  }

  private async reverse(at: { lat: number; lng: number }): Promise<void> {
    const show = async () => {
      try {
        const r = await api<Reverse>('POST', '/maps/v1/reverse', at);
        clearError();
        const name = r.formatted_address || `${at.lat.toFixed(5)}, ${at.lng.toFixed(5)}`;
        byId('details').replaceChildren(
          h('h2', { id: 'place-name' }, t('clickedPoint')),
          h('p', { class: 'address' }, r.formatted_address || t('noAddress')),
          h('p', { class: 'coords' }, `${at.lat.toFixed(5)}, ${at.lng.toFixed(5)}`),
          this.endButtons({ ...at, name }),
        );
      } catch (e) {
        showError(e);
      }
    };
    this.redetail = () => void show();
    await show();
  }
}

async function signIn(key: string): Promise<void> {
  performance.mark('svcmaps:signin');
  const err = byId('signin-error');
  err.textContent = '';
  setApiKey(key);
  try {
    await new Workspace().start();
  } catch (e) {
    clearApiKey();
    showError(e, err);
  }
}

function boot(): void {
  applyLang();
  langButton();
  byId('lang').addEventListener('click', () => {
    setLang(currentLang() === 'ar' ? 'en' : 'ar');
    langButton();
  });
  byId('signout').addEventListener('click', () => {
    clearApiKey();
    location.reload();
  });
  byId('signin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = byId<HTMLInputElement>('apikey');
    const key = input.value.trim();
    input.value = '';
    void signIn(key);
  });
  const saved = apiKey();
  if (saved) void signIn(saved);
}

boot();
