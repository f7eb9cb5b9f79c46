import { readFileSync } from 'node:fs';
import { etagOf } from '../../core/etag.js';
import { packagePath } from '../../resources/paths.js';
import type { Services } from '../../services.js';
import type { Router } from '../router.js';
import { withEtag } from '../etag.js';

/** The API's OpenAPI document, shipped in the package's docs/ (package.json `files`). */
export const OPENAPI_FILE = packagePath('docs', 'openapi.yaml');

const CACHE = 'public, max-age=3600';

interface Served {
  body: string;
  etag: string;
}

/** The YAML document as JSON text, parsed once: the first request pays for it, a server that is never asked does not. */
async function load(file: string): Promise<Served> {
  const { parse } = await import('yaml');
  const body = JSON.stringify(parse(readFileSync(file, 'utf8')));
  return { body, etag: etagOf(body) };
}

/** GET /maps/v1/openapi.json: the API's reference, without credentials, so tools and developers can read it first. */
export function register(router: Router, _s: Services, file = OPENAPI_FILE): void {
  let served: Promise<Served> | undefined;
  router.add({
    method: 'GET',
    pattern: '/maps/v1/openapi.json',
    surface: 'none',
    handler: async (ctx) => {
      // A failed read is not kept: the request answers 500 (logged) and the next one tries again.
      served ??= load(file).catch((e: unknown) => {
        served = undefined;
        throw e;
      });
      const doc = await served;
      return withEtag(
        ctx.req,
        {
          status: 200,
          headers: { 'Content-Type': 'application/json', 'Cache-Control': CACHE },
          body: doc.body,
        },
        doc.etag,
      );
    },
  });
}
