import { api } from './api.js';
import { h } from './dom.js';
import { t } from './i18n.js';

export interface Prediction {
  place_id: string;
  name: string;
  address: string;
  lat?: number;
  lng?: number;
  distance_meters?: number;
}

interface Autocomplete {
  predictions: Prediction[];
  budget_expired: boolean;
}

export interface SearchDeps {
  /** Where results are biased to: the map's centre. */
  bias(): { lat: number; lng: number };
  choose(p: Prediction): void;
  fail(e: unknown): void;
}

const DEBOUNCE_MS = 250;

/**
 * The search box: an ARIA 1.2 combobox with a listbox popup. Typing asks autocomplete (debounced, the previous
 * request aborted); Arrow keys move the active option, Enter chooses it, Escape closes the list.
 */
export function mountSearch(host: HTMLElement, d: SearchDeps): { relabel(): void } {
  const label = h('label', { for: 'search-input', class: 'visually-hidden' }, t('search'));
  const input = h('input', {
    id: 'search-input',
    type: 'text',
    role: 'combobox',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': 'search-list',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: t('searchPlaceholder'),
  });
  const list = h('ul', { id: 'search-list', role: 'listbox', 'aria-label': t('search'), hidden: true });
  host.append(label, input, list);

  let items: Prediction[] = [];
  let active = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: AbortController | undefined;

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const highlight = (i: number) => {
    active = i;
    list.querySelectorAll('[role=option]').forEach((el, j) => el.setAttribute('aria-selected', String(j === i)));
    if (i >= 0) {
      input.setAttribute('aria-activedescendant', `search-opt-${i}`);
      document.getElementById(`search-opt-${i}`)?.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };
  const pick = (i: number) => {
    const p = items[i];
    if (!p) return;
    input.value = p.name;
    close();
    d.choose(p);
  };
  const render = () => {
    list.replaceChildren(
      ...(items.length
        ? items.map((p, i) =>
            h(
              'li',
              {
                id: `search-opt-${i}`,
                role: 'option',
                'aria-selected': 'false',
                onmousedown: (e) => e.preventDefault(),
                onclick: () => pick(i),
              },
              h('span', { class: 'opt-name' }, p.name),
              p.address ? h('span', { class: 'opt-address' }, p.address) : null,
            ),
          )
        : [h('li', { class: 'empty', 'aria-disabled': 'true' }, t('noResults'))]),
    );
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    highlight(-1);
  };
  const query = async (q: string) => {
    inflight?.abort();
    const ctl = (inflight = new AbortController());
    const c = d.bias();
    const params = new URLSearchParams({ q, lat: c.lat.toFixed(5), lng: c.lng.toFixed(5) });
    try {
      const r = await api<Autocomplete>('GET', `/maps/v1/autocomplete?${params}`, undefined, undefined, ctl.signal);
      if (ctl.signal.aborted || input.value.trim() !== q) return;
      items = r.predictions.filter((p) => p.lat !== undefined && p.lng !== undefined);
      render();
    } catch (e) {
      if ((e as Error).name !== 'AbortError') d.fail(e);
    }
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) {
      inflight?.abort();
      items = [];
      close();
      return;
    }
    timer = setTimeout(() => void query(q), DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (list.hidden) {
        if (items.length) render();
        return;
      }
      if (!items.length) return;
      const step = e.key === 'ArrowDown' ? 1 : -1;
      highlight((active + step + items.length) % items.length);
    } else if (e.key === 'Enter') {
      if (!list.hidden && items.length) {
        e.preventDefault();
        pick(active >= 0 ? active : 0);
      }
    } else if (e.key === 'Escape') close();
  });
  input.addEventListener('blur', () => setTimeout(close, 150));

  return {
    relabel() {
      label.textContent = t('search');
      list.setAttribute('aria-label', t('search'));
      input.placeholder = t('searchPlaceholder');
    },
  };
}
