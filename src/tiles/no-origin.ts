import type { TileService } from './types.js';

/** Tiles before any origin (renderer, MBTiles or upstream) is configured: every tile is an origin miss (404). */
export const noTiles: TileService = {
  async tile() {
    return undefined;
  },
};
