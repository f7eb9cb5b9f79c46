import { describe, expect, it } from 'vitest';
import { progressBar } from '../../src/cli/ui/progress.js';

describe('import and seed progress', () => {
  it('rate and ETA follow the last 20 s of a stage, not its average (a contraction slows as it goes)', () => {
    let t = 0;
    const lines: string[] = [];
    const bar = progressBar(
      (l) => lines.push(l.trim()),
      false,
      'items',
      () => t,
    );
    // a million items in the first 10 s, then ten thousand a second; a line every 5 s (not a TTY)
    for (t = 5000; t <= 10_000; t += 5000) bar.update('contraction', (t / 10_000) * 1e6, 2e6);
    expect(lines.at(-1)).toMatch(/1000000\/2000000 {2}100000\/s {2}ETA 0:10$/);
    for (; t <= 70_000; t += 5000) bar.update('contraction', 1e6 + (t - 10_000) * 10, 2e6);
    // 1.6M done at 70 s: 400k left at 10k/s is 40 s (the stage's average, 22.9k/s, would say 17 s)
    expect(lines.at(-1)).toMatch(/^contraction .* 80% {2}1600000\/2000000 {2}10000\/s {2}ETA 0:40$/);
    // lines come at most every 5 s off a TTY, and always at the end
    t = 71_000;
    bar.update('contraction', 1_600_001, 2e6);
    expect(lines).toHaveLength(14);
    bar.update('contraction', 2e6, 2e6);
    expect(lines.at(-1)).toMatch(/100% .*ETA 0:00$/);
  });
});
