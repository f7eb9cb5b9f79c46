import { describe, expect, it } from 'vitest';
import { ReloadHooks } from '../../src/ops/reload.js';
import { silentLogger } from '../../src/core/log.js';

describe('reload hooks', () => {
  it('runs every hook in order, reports each, and a failing one does not stop the rest', async () => {
    const h = new ReloadHooks();
    const order: string[] = [];
    h.register('places', () => (order.push('places'), '12 places'));
    h.register('roads', async () => {
      order.push('roads');
      throw new Error('roads.graph: unsupported version');
    });
    h.register('render', () => void order.push('render'));
    const r = await h.run();
    expect(order).toEqual(['places', 'roads', 'render']);
    expect(r.map(({ ms: _ms, ...x }) => x)).toEqual([
      { name: 'places', ok: true, detail: '12 places' },
      { name: 'roads', ok: false, detail: 'roads.graph: unsupported version' },
      { name: 'render', ok: true, detail: 'reloaded' },
    ]);
  });

  it('overlapping reloads (two SIGHUPs in a row) share one run', async () => {
    const h = new ReloadHooks();
    let runs = 0;
    h.register('slow', () => new Promise<string>((r) => setTimeout(() => r(String(++runs)), 30)));
    const [a, b] = await Promise.all([h.run(), h.run()]);
    expect(a).toBe(b);
    expect(runs).toBe(1);
    await h.run();
    expect(runs).toBe(2);
  });

  it('closes a replaced engine only after the grace period, or at shutdown (a failing close is logged)', async () => {
    const warned: Array<[string, Record<string, unknown> | undefined]> = [];
    const h = new ReloadHooks(40, { ...silentLogger, warn: (msg, f) => void warned.push([msg, f]) });
    const closed: string[] = [];
    h.retire(() => closed.push('old-1'));
    expect(closed).toEqual([]);
    await new Promise((r) => setTimeout(r, 80));
    expect(closed).toEqual(['old-1']);
    h.retire(() => closed.push('old-2'));
    h.retire(() => {
      throw new Error('already closed');
    });
    h.closeAll();
    expect(closed).toEqual(['old-1', 'old-2']);
    expect(warned).toEqual([
      ['a retired engine failed to close', { error: expect.stringMatching(/^Error: already closed\n\s+at /) }],
    ]);
  });
});
