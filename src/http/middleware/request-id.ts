import { randomUUID } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Echo a caller's well-formed UUID (so traces join up), otherwise mint one; never echo arbitrary text. */
export const pickRequestId = (given: string | undefined): string =>
  given !== undefined && UUID_RE.test(given) ? given : randomUUID();
