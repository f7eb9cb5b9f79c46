import type { Services } from '../../services.js';
import type { Router } from '../router.js';
import * as admin from './admin.js';
import * as consolePages from './console.js';
import * as directions from './directions.js';
import * as health from './health.js';
import * as openapi from './openapi.js';
import * as places from './places.js';
import * as resources from './resources.js';
import * as staticmap from './staticmap.js';
import * as tiles from './tiles.js';
import * as tokens from './tokens.js';

/** Every capability's routes, one module each. */
export function registerAll(router: Router, s: Services): void {
  for (const m of [health, openapi, places, directions, tokens, tiles, resources, staticmap, admin, consolePages])
    m.register(router, s);
}
