import { api, ApiError } from './api.js';
import { h } from './dom.js';
import { currentLang, errorText, t, type Key } from './i18n.js';

/** POST /admin/keys answers the key record and, this once, the full key. */
export interface CreatedKey {
  id: string;
  name: string;
  key: string;
}

/** The form's fields, by the API's field name: the input's id and its label. */
const FIELDS = {
  name: { id: 'new-key-name', label: 'name' },
  role: { id: 'new-key-role', label: 'role' },
  plan: { id: 'new-key-plan', label: 'plan' },
  per_minute: { id: 'new-key-per-minute', label: 'perMinute' },
  daily: { id: 'new-key-daily', label: 'daily' },
  expires_in_s: { id: 'new-key-expires', label: 'expires' },
} as const satisfies Record<string, { id: string; label: Key }>;
type Field = keyof typeof FIELDS;

/** The API's bounds (src/http/routes/admin.ts), checked here first so most mistakes never leave the page. */
const MAX_PER_MINUTE = 1e9;
const MAX_DAILY = 1e12;
const MIN_EXPIRY_S = 60;
const MAX_EXPIRY_S = 100 * 365 * 86400;
const UNITS = { minutes: 60, hours: 3600, days: 86400 } as const;

const fill = (s: string, vars: Record<string, string>) => s.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? '');
const num = (n: number) => new Intl.NumberFormat(currentLang()).format(n);

/** Whole numbers typed with Latin, Arabic-Indic or Persian digits and any grouping; '' when empty, NaN when not one. */
function parseWhole(text: string): number | '' {
  const s = text
    .trim()
    .replace(/[\u0660-\u0669]/g, (d) => String(d.charCodeAt(0) - 0x0660))
    .replace(/[\u06f0-\u06f9]/g, (d) => String(d.charCodeAt(0) - 0x06f0))
    .replace(/[\s,.\u066b\u066c_]/g, '');
  if (s === '') return '';
  return /^\d+$/.test(s) ? Number(s) : NaN;
}

/**
 * The API's own validation message (`field: why`, src/http/routes/admin.ts) as a sentence in the chosen language,
 * with the field it names; unknown shapes keep the generic message for VALIDATION_ERROR.
 */
function apiFieldError(message: string): { field: Field | undefined; text: string } {
  const m = /^(\w+): (.*)$/.exec(message);
  const field = m && m[1]! in FIELDS ? (m[1] as Field) : undefined;
  if (!field) return { field, text: errorText('VALIDATION_ERROR') };
  const why = m![2]!;
  const label = t(FIELDS[field].label);
  const range = /an integer from (\d+) to (\d+)/.exec(why);
  if (field === 'expires_in_s') return { field, text: fill(t('vExpiry'), { field: label }) };
  if (range) return { field, text: fill(t('vInt'), { field: label, min: num(+range[1]!), max: num(+range[2]!) }) };
  const chars = /at most (\d+) characters/.exec(why);
  if (chars) return { field, text: fill(t('vText'), { field: label, max: num(+chars[1]!) }) };
  const oneOf = /one of (.+)$/.exec(why);
  if (oneOf) return { field, text: fill(t('vOneOf'), { field: label, list: oneOf[1]! }) };
  return { field, text: `${label}: ${errorText('VALIDATION_ERROR')}` };
}

/**
 * The "create key" form: name, role, plan, per-minute limit, daily quota and expiry, every field optional (empty
 * takes the server's default; no expiry never expires). Mistakes are shown beside their field and together in an
 * alert, in the chosen language, whether found here or by the API; the first wrong field gets the focus.
 */
export function keyForm(created: (k: CreatedKey) => void, fail: (e: unknown) => void): HTMLFormElement {
  const errId = (f: Field) => `${FIELDS[f].id}-error`;
  const text = (f: Field, maxlength: number, extra: Record<string, string> = {}) =>
    h('input', {
      id: FIELDS[f].id,
      name: f,
      type: 'text',
      maxlength: String(maxlength),
      'aria-describedby': `${errId(f)} new-key-hint`,
      ...extra,
    });
  const whole = (f: Field) => text(f, 20, { inputmode: 'numeric', autocomplete: 'off' });
  const inputs = {
    name: text('name', 200),
    role: h(
      'select',
      { id: FIELDS.role.id, name: 'role', 'aria-describedby': errId('role') },
      h('option', { value: 'user' }, 'user'),
      h('option', { value: 'super_admin' }, 'super_admin'),
    ),
    plan: text('plan', 64),
    per_minute: whole('per_minute'),
    daily: whole('daily'),
    expires_in_s: whole('expires_in_s'),
  };
  const unit = h(
    'select',
    { id: 'new-key-expires-unit', name: 'expires_unit', 'aria-label': t('expiryUnit') },
    ...(Object.keys(UNITS) as Array<keyof typeof UNITS>).map((u) =>
      h('option', { value: u, selected: u === 'days' }, t(u)),
    ),
  );
  const errors = Object.fromEntries(
    (Object.keys(FIELDS) as Field[]).map((f) => [f, h('span', { id: errId(f), class: 'field-error' })]),
  ) as Record<Field, HTMLElement>;
  const summary = h('div', { id: 'new-key-errors', class: 'error', role: 'alert' });

  const show = (found: Array<[Field | undefined, string]>) => {
    for (const f of Object.keys(FIELDS) as Field[]) {
      errors[f].textContent = '';
      inputs[f].removeAttribute('aria-invalid');
    }
    for (const [f, msg] of found) {
      if (!f) continue;
      errors[f].textContent = msg;
      inputs[f].setAttribute('aria-invalid', 'true');
    }
    summary.replaceChildren(...(found.length ? [h('ul', {}, ...found.map(([, msg]) => h('li', {}, msg)))] : []));
    const first = found.find(([f]) => f)?.[0];
    if (first) inputs[first].focus();
  };

  /** The body to send, or the mistakes found. */
  const read = (): { body: Record<string, unknown> } | { found: Array<[Field, string]> } => {
    const found: Array<[Field, string]> = [];
    const body: Record<string, unknown> = { name: inputs.name.value.trim(), role: inputs.role.value };
    if (inputs.plan.value.trim()) body.plan = inputs.plan.value.trim();
    const int = (f: 'per_minute' | 'daily', max: number) => {
      const v = parseWhole(inputs[f].value);
      if (v === '') return;
      if (Number.isNaN(v) || v < 1 || v > max)
        found.push([f, fill(t('vInt'), { field: t(FIELDS[f].label), min: num(1), max: num(max) })]);
      else body[f] = v;
    };
    int('per_minute', MAX_PER_MINUTE);
    int('daily', MAX_DAILY);
    const exp = parseWhole(inputs.expires_in_s.value);
    if (exp !== '') {
      const s = exp * UNITS[unit.value as keyof typeof UNITS];
      if (Number.isNaN(s) || s < MIN_EXPIRY_S || s > MAX_EXPIRY_S)
        found.push(['expires_in_s', fill(t('vExpiry'), { field: t('expires') })]);
      else body.expires_in_s = s;
    }
    return found.length ? { found } : { body };
  };

  const field = (f: Field, ...control: HTMLElement[]) =>
    h(
      'div',
      { class: 'field' },
      h('label', { for: FIELDS[f].id }, t(FIELDS[f].label)),
      control.length > 1 ? h('span', { class: 'pair' }, ...control) : control[0]!,
      errors[f],
    );
  return h(
    'form',
    {
      class: 'create',
      novalidate: true,
      'aria-labelledby': 'new-key-title',
      onsubmit: (e) => {
        e.preventDefault();
        const got = read();
        if ('found' in got) return show(got.found);
        show([]);
        void api<{ key: CreatedKey }>('POST', '/admin/keys', got.body)
          .then((r) => created(r.key))
          .catch((err: unknown) => {
            if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') {
              const { field: f, text: msg } = apiFieldError(err.message);
              show([[f, msg]]);
            } else fail(err);
          });
      },
    },
    h('h3', { id: 'new-key-title' }, t('newKeyTitle')),
    h(
      'div',
      { class: 'fields' },
      field('name', inputs.name),
      field('role', inputs.role),
      field('plan', inputs.plan),
      field('per_minute', inputs.per_minute),
      field('daily', inputs.daily),
      field('expires_in_s', inputs.expires_in_s, unit),
    ),
    h('p', { id: 'new-key-hint', class: 'hint' }, t('createHint')),
    summary,
    h('button', { type: 'submit' }, t('create')),
  );
}
