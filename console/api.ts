import { currentLang } from './i18n.js';

/** The API key lives in this tab's sessionStorage only: never in a URL, a log or localStorage. */
const KEY = 'svcmaps.apiKey';
export const apiKey = (): string | null => sessionStorage.getItem(KEY);
export const setApiKey = (k: string): void => sessionStorage.setItem(KEY, k);
export const clearApiKey = (): void => sessionStorage.removeItem(KEY);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string };
  code?: string;
  message?: string;
}

/**
 * Calls the appliance's JSON API with the key in X-API-Key and the chosen language as `locale`; answers `data` of
 * the success envelope or throws ApiError carrying the error code (NETWORK when the server was not reached).
 */
export async function api<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  key = apiKey(),
  signal?: AbortSignal,
): Promise<T> {
  const url = new URL(path, location.origin);
  if (url.pathname.startsWith('/maps/v1/')) url.searchParams.set('locale', currentLang());
  const headers: Record<string, string> = {};
  if (key) headers['X-API-Key'] = key;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK', (e as Error).message);
  }
  let json: unknown;
  try {
    json = await res.json();
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    if (!(e instanceof SyntaxError)) throw new ApiError(0, 'NETWORK', (e as Error).message);
    json = undefined; // a body that is not JSON (a proxy's error page): the status speaks
  }
  if (!res.ok) {
    const b = (json ?? {}) as ErrorBody;
    throw new ApiError(
      res.status,
      b.error?.code ?? b.code ?? `HTTP_${res.status}`,
      b.error?.message ?? b.message ?? res.statusText,
    );
  }
  return (json as { data: T }).data;
}
