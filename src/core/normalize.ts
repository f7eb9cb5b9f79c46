/**
 * Text normalisation shared by indexing and querying, so both sides agree on what a name "is".
 * Arabic: strip harakat (U+064B-065F), superscript alef (U+0670) and tatweel (U+0640); fold alef forms (أ إ آ ٱ) to ا,
 * alef maksura ى to ي, ta marbuta ة to ه, hamza carriers ؤ ئ to و ي; Eastern Arabic and Persian digits to ASCII.
 * Latin: NFKD, drop combining marks, lower case. Everything else becomes a token separator.
 */
// Every member is a combining mark on purpose (harakat, superscript alef, Quranic marks) plus tatweel.
// eslint-disable-next-line no-misleading-character-class
const ARABIC_MARKS = /[\u064B-\u065F\u0670\u0640\u06D6-\u06ED]/g;
const FOLDS: Record<string, string> = {
  أ: 'ا',
  إ: 'ا',
  آ: 'ا',
  ٱ: 'ا',
  ى: 'ي',
  ة: 'ه',
  ؤ: 'و',
  ئ: 'ي',
  ک: 'ك',
  ی: 'ي',
};
const FOLD_RE = /[أإآٱىةؤئکی]/g;
const DIGITS_RE = /[\u0660-\u0669\u06F0-\u06F9]/g;

export function normalizeText(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(ARABIC_MARKS, '')
    .replace(FOLD_RE, (c) => FOLDS[c]!)
    .replace(DIGITS_RE, (d) => String((d.charCodeAt(0) & 0xf) % 10))
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export const tokenize = (s: string): string[] => {
  const n = normalizeText(s);
  return n ? n.split(' ') : [];
};

/** The Arabic definite article, indexed both with and without it ("القاهرة" is also found as "قاهرة"). */
export function articleVariants(token: string): string[] {
  return token.length > 3 && token.startsWith('ال') ? [token, token.slice(2)] : [token];
}

export const hasArabic = (s: string): boolean => /[\u0600-\u06FF]/.test(s);
