import type { Credentials } from '../../auth/authenticator.js';
import type { HttpRequest } from '../types.js';

/** Pulls the three credential forms out of a request; empty values count as absent. */
export function readCredentials(req: HttpRequest): Credentials {
  const apiKey = req.headers['x-api-key']?.trim() || undefined;
  const auth = req.headers['authorization'];
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  const bearer = m ? m[1] : auth ? '' : undefined;
  const tileToken = req.query.get('t') || undefined;
  return { apiKey, bearer, tileToken };
}
