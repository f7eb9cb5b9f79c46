import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GlobalFonts } from '@napi-rs/canvas';
import { isErrno } from '../core/errors.js';

/**
 * Fonts for map labels: Noto Sans (Latin) with Noto Sans Arabic as per-glyph fallback, so one font string draws
 * bilingual labels and Skia shapes Arabic (joined, right to left). Looked up in the npm font packages first, then
 * in Debian's fonts-noto-core; DejaVu Sans (which has Arabic too) is the last resort so labels never go missing.
 */
export const LABEL_FONT = '"Noto Sans", "Noto Sans Arabic", "DejaVu Sans"';

const require = createRequire(import.meta.url);

function pkgFile(pkg: string, rel: string): string | undefined {
  try {
    const p = join(dirname(require.resolve(`${pkg}/package.json`)), rel);
    return existsSync(p) ? p : undefined;
  } catch (e) {
    // not installed (or its package.json not exported): the next candidate
    if (isErrno(e, 'MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED')) return undefined;
    throw e;
  }
}

const CANDIDATES: Array<[family: string, paths: Array<string | undefined>]> = [
  [
    'Noto Sans',
    [
      pkgFile('@expo-google-fonts/noto-sans', '400Regular/NotoSans_400Regular.ttf'),
      '/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf',
    ],
  ],
  [
    'Noto Sans',
    [
      pkgFile('@expo-google-fonts/noto-sans', '600SemiBold/NotoSans_600SemiBold.ttf'),
      '/usr/share/fonts/truetype/noto/NotoSans-SemiBold.ttf',
    ],
  ],
  [
    'Noto Sans',
    [
      pkgFile('@expo-google-fonts/noto-sans', '400Regular_Italic/NotoSans_400Regular_Italic.ttf'),
      '/usr/share/fonts/truetype/noto/NotoSans-Italic.ttf',
    ],
  ],
  [
    'Noto Sans Arabic',
    [
      pkgFile('@expo-google-fonts/noto-sans-arabic', '400Regular/NotoSansArabic_400Regular.ttf'),
      '/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf',
    ],
  ],
  [
    'Noto Sans Arabic',
    [
      pkgFile('@expo-google-fonts/noto-sans-arabic', '600SemiBold/NotoSansArabic_600SemiBold.ttf'),
      '/usr/share/fonts/truetype/noto/NotoSansArabic-SemiBold.ttf',
    ],
  ],
  ['DejaVu Sans', ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf']],
];

let registered: string[] | undefined;

/** Registers the label fonts once per process; returns the files used (for `svcmaps tiles info`). */
export function ensureFonts(): string[] {
  if (registered) return registered;
  registered = [];
  for (const [family, paths] of CANDIDATES) {
    const file = paths.find((p): p is string => p !== undefined && existsSync(p));
    if (file && GlobalFonts.registerFromPath(file, family)) registered.push(file);
  }
  return registered;
}
