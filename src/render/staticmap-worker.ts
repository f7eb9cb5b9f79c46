/** A static-map thread (see staticmap.ts): draws and encodes one map at a time from the tiles it is sent. */
import { serveTasks } from '../limits/worker-host.js';
import { composeStaticMap, type StaticMapSpec } from './staticmap-compose.js';

serveTasks<true>(
  () => true,
  (_state, payload) => composeStaticMap(payload as StaticMapSpec),
);
