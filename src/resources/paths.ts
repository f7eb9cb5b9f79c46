import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The package root, whether running from src/ (tests) or dist/ (installed): both sit one level below it. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);
