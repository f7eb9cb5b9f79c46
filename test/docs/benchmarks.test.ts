import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { page } from '../../scripts/gen-benchmarks.mjs';

describe('docs/benchmarks.md', () => {
  it('is what the committed latest results make (run `npm run docs:benchmarks` after a bench)', async () => {
    const made = await (page as () => Promise<string>)();
    const kept = readFileSync(join(__dirname, '../../docs/benchmarks.md'), 'utf8');
    expect(kept, 'docs/benchmarks.md is stale: run `npm run docs:benchmarks`').toBe(made);
  });
});
