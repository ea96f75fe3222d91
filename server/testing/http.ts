import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Calls the real Next.js route handlers under app/ in-process: the URL is matched against the
 * app directory's folders ([param] segments included) the way the App Router matches it, the
 * module's exported method handler is invoked with a real `Request`. Tests exercise exactly the
 * code `next start` serves, minus the HTTP socket.
 */
type RouteFile = { pattern: string[]; file: string };

const APP_DIR = path.resolve(import.meta.dirname, '../../app');

function collect(dir: string, segments: string[], out: RouteFile[]) {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      // Route groups `(inbox)` do not appear in the URL.
      collect(full, /^\(.*\)$/.test(entry) ? segments : [...segments, entry], out);
    } else if (entry === 'route.ts') {
      out.push({ pattern: segments, file: full });
    }
  }
}

const routes: RouteFile[] = [];
collect(APP_DIR, [], routes);
// Static segments win over dynamic ones, as in the App Router.
routes.sort((a, b) => a.pattern.filter((s) => s.startsWith('[')).length - b.pattern.filter((s) => s.startsWith('[')).length);

export function match(pathname: string): { file: string; params: Record<string, string> } | null {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  for (const route of routes) {
    if (route.pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = route.pattern.every((seg, i) => {
      const dyn = seg.match(/^\[(.+)\]$/);
      if (dyn) return ((params[dyn[1]!] = parts[i]!), true);
      return seg === parts[i];
    });
    if (ok) return { file: route.file, params };
  }
  return null;
}

export type CallOptions = {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or bytes are sent as they are. */
  body?: unknown;
};

export async function call(method: string, pathWithQuery: string, options: CallOptions = {}): Promise<Response> {
  const url = new URL(pathWithQuery, 'http://localhost:3000');
  const found = match(url.pathname);
  if (!found) return new Response(JSON.stringify({ detail: 'Not Found' }), { status: 404 });
  const mod = (await import(found.file)) as Record<string, (req: Request, ctx: unknown) => Promise<Response>>;
  const handler = mod[method.toUpperCase()];
  if (!handler) return new Response(null, { status: 405 });
  const headers = new Headers(options.headers);
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (options.body instanceof Uint8Array) {
    body = new Uint8Array(options.body);
  } else if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    if (typeof options.body !== 'string' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  headers.set('host', url.host);
  return handler(new Request(url, { method, headers, body }), { params: Promise.resolve(found.params) });
}

export const api = {
  get: (p: string, o?: CallOptions) => call('GET', p, o),
  post: (p: string, o?: CallOptions) => call('POST', p, o),
  put: (p: string, o?: CallOptions) => call('PUT', p, o),
  patch: (p: string, o?: CallOptions) => call('PATCH', p, o),
  delete: (p: string, o?: CallOptions) => call('DELETE', p, o),
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read ad hoc fields of a response body, as Response.json() types it
export async function jsonOf<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export type Headers = Record<string, string>;

/** A tenant (server/testing/factories) with ready-made credentials and its REST base path. */
export async function restTenant() {
  const { createTenant } = await import('./factories');
  const t = await createTenant();
  return {
    ...t,
    key: { 'x-api-key': t.apiKey } as Headers,
    session: { authorization: `Bearer ${t.sessionToken}` } as Headers,
    base: `/api/v1/businesses/${t.business.id}`,
  };
}
export type RestTenant = Awaited<ReturnType<typeof restTenant>>;

/** GET/POST/PUT/PATCH/DELETE through the route handlers, answering status and parsed body. */
export async function getJson(path: string, headers: Headers) {
  const res = await api.get(path, { headers });
  return { status: res.status, body: await jsonOf(res) };
}
export async function postJson(path: string, headers: Headers, body: unknown) {
  const res = await api.post(path, { headers, body });
  return { status: res.status, body: await jsonOf(res) };
}
export async function putJson(path: string, headers: Headers, body: unknown) {
  const res = await api.put(path, { headers, body });
  return { status: res.status, body: await jsonOf(res) };
}
export async function patchJson(path: string, headers: Headers, body: unknown) {
  const res = await api.patch(path, { headers, body });
  return { status: res.status, body: await jsonOf(res) };
}
export async function deleteJson(path: string, headers: Headers) {
  const res = await api.delete(path, { headers });
  return { status: res.status, body: await jsonOf(res) };
}

/** The `loc` of each validation error in a 422 body, in order. */
export const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((d) => d.loc);
/** The same, read from the response. */
export const locsOf = async (res: Response) => locs(await jsonOf(res));
