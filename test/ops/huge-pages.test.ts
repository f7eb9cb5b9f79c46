import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HUGE_PAGES_TUNABLE, hugePagesHint, thpMode, withHugePages } from '../../src/ops/huge-pages.js';

const MB = 2 ** 20;

describe('transparent huge pages for the road graph', () => {
  it('hints only where the tunable would change something: THP on madvise, a large graph, tunable unset', () => {
    const hint = hugePagesHint(1400 * MB, {}, 'madvise');
    expect(hint).toContain(`GLIBC_TUNABLES=${HUGE_PAGES_TUNABLE}`);
    expect(hint).toContain('1400 MB');
    expect(hugePagesHint(1400 * MB, {}, 'always')).toBeUndefined();
    expect(hugePagesHint(1400 * MB, {}, 'never')).toBeUndefined();
    expect(hugePagesHint(1400 * MB, {}, '')).toBeUndefined(); // no THP (not Linux)
    expect(hugePagesHint(10 * MB, {}, 'madvise')).toBeUndefined(); // a city's graph: nothing to gain
    expect(hugePagesHint(1400 * MB, { GLIBC_TUNABLES: HUGE_PAGES_TUNABLE }, 'madvise')).toBeUndefined();
    // an operator who turned it off chose so
    expect(hugePagesHint(1400 * MB, { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' }, 'madvise')).toBeUndefined();
  });

  it('adds the tunable to the environment, keeping the tunables already set', () => {
    expect(withHugePages({ A: '1' })).toEqual({ A: '1', GLIBC_TUNABLES: HUGE_PAGES_TUNABLE });
    expect(withHugePages({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES).toBe(
      `glibc.malloc.arena_max=2:${HUGE_PAGES_TUNABLE}`,
    );
    const off = { GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0' };
    expect(withHugePages(off)).toBe(off);
  });

  it('reads the kernel THP mode from its bracketed word', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-thp-'));
    try {
      writeFileSync(join(dir, 'enabled'), 'always [madvise] never\n');
      expect(thpMode(join(dir, 'enabled'))).toBe('madvise');
      expect(thpMode(join(dir, 'absent'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // What the systemd unit relies on: with the tunable, a SharedArrayBuffer (the graph's memory) lands on huge pages.
  it.runIf(thpMode() === 'madvise')('puts a SharedArrayBuffer on huge pages with the tunable, not without', () => {
    const script = `const b = new Uint8Array(new SharedArrayBuffer(${64 * MB}));
      for (let i = 0; i < b.length; i += 4096) b[i] = 1;
      const s = require('fs').readFileSync('/proc/self/smaps_rollup', 'utf8');
      console.log(/AnonHugePages:\\s+(\\d+)/.exec(s)[1]);`;
    const hugeKb = (env: NodeJS.ProcessEnv) => {
      const r = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return Number(r.stdout.trim());
    };
    const { GLIBC_TUNABLES: _, ...without } = process.env;
    expect(hugeKb(without)).toBeLessThan(8 * 1024);
    expect(hugeKb(withHugePages(without))).toBeGreaterThanOrEqual(60 * 1024);
  });
});
