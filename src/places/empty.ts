import { AppError } from '../core/errors.js';
import { cacheOnlyRecord } from './format.js';
import type { PlacesService } from './types.js';

/**
 * The places engine with no index loaded: every answer is the spec's honest empty one (no match, no address,
 * no photos). A full place lookup has no source to ask, so it answers PLACE_UNAVAILABLE; cache_only still gets
 * the minimal record the spec prescribes for a miss.
 */
export const emptyPlaces: PlacesService = {
  async autocomplete() {
    return { predictions: [], source: 'empty', budget_expired: false, miss: true };
  },
  async geocode() {
    return { matched: false, miss: true };
  },
  async reverse() {
    return { formatted_address: '', source: 'no_address', miss: true };
  },
  async place(l) {
    if (!l.cacheOnly) throw new AppError('PLACE_UNAVAILABLE', 'No places index is loaded on this server');
    return cacheOnlyRecord(l);
  },
  async photos() {
    return { place_id: '', photos: [] };
  },
};
