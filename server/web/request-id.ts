import { randomUUID } from 'node:crypto';

/** docs/api.md#request-ids: what a caller's X-Request-Id may be. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's X-Request-Id when it matches the pattern of docs/api.md#request-ids, else a new UUID. */
export function requestIdOf(req: Request): string {
  const incoming = req.headers.get('x-request-id');
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
