import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type Names = { countries: Record<string, string | string[]> };
const EN = (require('i18n-iso-countries/langs/en.json') as Names).countries;
const AR = (require('i18n-iso-countries/langs/ar.json') as Names).countries;

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** Country names in English and Arabic by ISO 3166-1 alpha-2 code (either case). */
export function countryName(cc: string | null | undefined, locale: 'en' | 'ar'): string | undefined {
  if (!cc) return undefined;
  const code = cc.toUpperCase();
  return first((locale === 'ar' ? AR : EN)[code]) ?? first(EN[code]);
}
