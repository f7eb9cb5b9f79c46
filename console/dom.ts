type Attrs = Record<string, string | boolean | undefined | ((e: Event) => void)>;

/** A tiny element builder: attributes (on* become listeners), then children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Node | string | null | undefined | false>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} missing from the page`);
  return el as T;
};

/** Numbers and units in the chosen language. */
export function fmtDistance(m: number, lang: string): string {
  const n = new Intl.NumberFormat(lang, { maximumFractionDigits: m < 1000 ? 0 : 1 });
  return m < 1000
    ? `${n.format(m)} ${lang === 'ar' ? 'م' : 'm'}`
    : `${n.format(m / 1000)} ${lang === 'ar' ? 'كم' : 'km'}`;
}

export function fmtDuration(s: number, lang: string): string {
  const n = new Intl.NumberFormat(lang);
  const min = Math.round(s / 60);
  if (min < 1) return `${n.format(Math.round(s))} ${lang === 'ar' ? 'ث' : 's'}`;
  if (min < 60) return `${n.format(min)} ${lang === 'ar' ? 'د' : 'min'}`;
  return `${n.format(Math.floor(min / 60))} ${lang === 'ar' ? 'س' : 'h'} ${n.format(min % 60)} ${lang === 'ar' ? 'د' : 'min'}`;
}

export function fmtBytes(b: number, lang: string): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let i = 0;
  while (b >= 1024 && i < units.length - 1) {
    b /= 1024;
    i++;
  }
  return new Intl.NumberFormat(lang, {
    style: 'unit',
    unit: units[i],
    unitDisplay: 'short',
    maximumFractionDigits: i ? 1 : 0,
  }).format(b);
}
