import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PLACES } from '../../src/places/load.js';
import { search } from '../../src/places/search.js';
import { PlacesIndex } from '../../src/store/places/index-db.js';

// Ranking on the embedded gazetteer (read in place, read-only), in-process.
const index = new PlacesIndex(BASE_PLACES).warm();
afterAll(() => index.close());

const top = (q: string) =>
  search(index, { q, bias: { lat: 31.95, lng: 35.93 }, biasGiven: false, country: 'jo', locale: 'en' })
    .slice(0, 2)
    .map((p) => `${p.name}, ${p.address}`);

describe('ranking: a place’s own name before another place’s alternate name', () => {
  it('"rome" finds Rome, Italy before Lomé (whose GeoNames alternate names include "Rome"); "lome" finds Lomé', () => {
    expect(top('rome')[0]).toBe('Rome, Italy');
    expect(top('rome')[1]).toBe('Lomé, Togo'); // still found by that name
    expect(top('lome')[0]).toBe('Lomé, Togo');
  });

  it('an own name in another script or language still matches exactly', () => {
    expect(top('روما')[0]).toBe('Rome, Italy');
    expect(top('عمان')[0]).toBe('Amman, Jordan');
  });
});
