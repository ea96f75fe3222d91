import http from 'node:http';
import { MAX_WEBHOOK_URL } from '@/server/shared/outgoing-webhooks';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { FetchRefused, isPublicAddress, resolveAllowed, type Resolver } from './public-fetch';

/**
 * POSTs a webhook to a URL a business gave us, without letting it reach inside our network, and
 * answers what happened in a form a delivery log can keep. The same vetting as fetchPublic (the
 * address lists and the resolution are shared with it): https only, every address the host resolves
 * to must be public, and the connection goes to the vetted address; with `allowPrivate`
 * (WEBHOOK_ALLOW_PRIVATE_URLS) plain http and any address are allowed. Unlike fetchPublic, redirects
 * are never followed (a 3xx is an answer like any other non-2xx, for the caller to retry) and a
 * failure is a result, not an exception.
 *
 * Connections are kept alive and shared: a delivery worker sends hundreds of requests a second,
 * often to one receiver. The vetting is done in the agents' `lookup`, which every new socket goes
 * through (an IP literal skips `lookup` in node:net, so it is vetted before the request); a reused
 * socket is still connected to the address that was vetted when it was opened.
 */

export type WebhookFailure = 'refused_address' | 'bad_url' | 'timeout' | 'connect_failed' | 'tls' | 'failed';

export type WebhookResult = {
  /** A 2xx status, its headers and its (capped) body received within the deadline. */
  ok: boolean;
  /** Present once the receiver's status line arrived, even if the body then timed out. */
  status?: number;
  /** From Retry-After (seconds, or an HTTP date counted from now); null when absent or not understood. */
  retryAfterSeconds?: number | null;
  /** The first RESPONSE_BODY_BYTES of the body as UTF-8 (a character cut in two at the end is dropped). */
  responseBody?: string;
  /** At most MAX_RESPONSE_HEADERS headers, names in lower case, each value cut at MAX_HEADER_VALUE characters. */
  responseHeaders?: Record<string, string>;
  durationMs: number;
  error?: { reason: WebhookFailure; message: string };
};

export type WebhookPolicyOptions = {
  /** WEBHOOK_ALLOW_PRIVATE_URLS: plain http, and addresses that are not public. */
  allowPrivate: boolean;
  /** One deadline for the look-up, connect, TLS, request, response headers and capped body together. */
  timeoutMs?: number;
  /** Connections open at once to one origin (host and port); more requests wait for one of them. */
  maxSocketsPerOrigin?: number;
  /**
   * How long a kept-alive connection may sit unused before we close it: under the 5 s many servers
   * (Node's among them) wait before closing an idle one, so we rarely send on a connection the
   * receiver is closing at that moment.
   */
  idleTimeoutMs?: number;
  /** Name → addresses; the system resolver unless a test simulates DNS. */
  resolve?: Resolver;
  /** Which addresses may be reached when `allowPrivate` is off; public ones unless a test says otherwise. */
  isAllowedAddress?: (address: string) => boolean;
  /** Trusted roots for https; the system's unless a test serves its own certificate. */
  ca?: string;
};

export const RESPONSE_BODY_BYTES = 2048;
/**
 * A body past what we keep is read on and discarded up to this size, so that the connection can
 * carry the next request; a longer one is cut and its connection closed.
 */
const DRAIN_BYTES = 16 * 1024;
export const MAX_RESPONSE_HEADERS = 50;
export const MAX_HEADER_VALUE = 1000;
/** Retry-After fits an integer column whatever the receiver writes. */
const MAX_RETRY_AFTER_SECONDS = 2 ** 31 - 1;
/** Framing and connection headers are ours to set: a caller's could desynchronise a shared connection. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

/**
 * What postWebhook needs besides the request: the vetting rules and the kept-alive connections.
 * Make one per process (per setting) and keep it: its agents are the connection pool.
 */
export class WebhookPolicy {
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
  readonly isAllowed: (address: string) => boolean;
  readonly httpAgent: http.Agent;
  readonly httpsAgent: https.Agent;

  constructor(options: WebhookPolicyOptions) {
    this.allowPrivate = options.allowPrivate;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.isAllowed = options.allowPrivate ? () => true : (options.isAllowedAddress ?? isPublicAddress);
    const isAllowed = this.isAllowed;
    // Each new socket resolves its host here and connects only to addresses that passed: DNS is
    // asked once per connection, so it cannot answer one thing to the check and another to connect.
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      resolveAllowed(hostname, options.resolve, isAllowed).then(
        (addresses) =>
          lookupOptions.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family),
        (err: Error) => callback(err, ''),
      );
    };
    const maxSockets = options.maxSocketsPerOrigin ?? 32;
    const agentOptions = {
      keepAlive: true,
      maxSockets,
      maxFreeSockets: maxSockets,
      timeout: options.idleTimeoutMs ?? 4_000,
      // The most recently used connection first: a quiet period lets the others expire.
      scheduling: 'lifo' as const,
      lookup,
    };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent({ ...agentOptions, ...(options.ca ? { ca: options.ca } : {}) });
  }

  /** Closes every connection (at shutdown, or a test's end); requests after it open new ones. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** Parses a URL as a webhook endpoint's: the URL, or what is wrong with it (shared by creation and delivery). */
function parseWebhookUrl(raw: string, allowPrivate: boolean): URL | string {
  if (raw.length > MAX_WEBHOOK_URL) return `must be at most ${MAX_WEBHOOK_URL.toLocaleString('en-US')} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  if (url.username || url.password) return 'must not contain a user name or password';
  // `new URL` drops an empty fragment ("…/#"); the raw string still shows it.
  if (raw.includes('#')) return 'must not contain a fragment (#…)';
  return url;
}

/** Names that only make sense inside a network: RFC 6761's localhost, mDNS, ICANN's private-use TLD, RFC 8375. */
const LOCAL_SUFFIXES = ['localhost', 'localdomain', 'local', 'internal', 'home.arpa'];

/**
 * Whether an endpoint URL may be saved: the message for a 422, or null. Synchronous and without DNS
 * (a name that resolves to a private address is refused at each delivery instead, since DNS can
 * change after creation); it refuses what is visibly not a public https endpoint.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  const url = parseWebhookUrl(raw, allowPrivate);
  if (typeof url === 'string') return url;
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (net.isIP(host))
    return isPublicAddress(host) ? null : 'must not point to a loopback, private or otherwise non-public address';
  // A name without a dot is completed by the resolver's search domains: an internal host.
  if (!host.includes('.') || LOCAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`)))
    return 'must name a public host, not a local one';
  return null;
}

/** Retry-After as seconds from `now`: delay-seconds or an HTTP date (RFC 9110's three forms); null if neither. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), MAX_RETRY_AFTER_SECONDS);
  // Every HTTP date starts with the day's name; Date.parse alone would read "1.5" as a date in 2001.
  if (!/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)/.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

function keptHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, MAX_RESPONSE_HEADERS)) {
    if (value === undefined) continue;
    kept[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_HEADER_VALUE);
  }
  return kept;
}

/**
 * POSTs `body` as application/json to `url` with `headers` (the signature headers; framing ones are
 * ignored) within policy.timeoutMs. Never throws: every failure is in the result's `error`.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  policy: WebhookPolicy,
): Promise<WebhookResult> {
  const started = performance.now();
  const fail = (reason: WebhookFailure, message: string): WebhookResult => ({
    ok: false,
    durationMs: Math.round(performance.now() - started),
    error: { reason, message },
  });
  const parsed = parseWebhookUrl(url, policy.allowPrivate);
  if (typeof parsed === 'string') return fail('bad_url', `the URL ${parsed}`);
  const literal = parsed.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(literal) && !policy.isAllowed(literal)) return fail('refused_address', `${literal} is not a public address`);
  const secure = parsed.protocol === 'https:';
  const payload = Buffer.from(body, 'utf8');
  let req: http.ClientRequest;
  try {
    req = (secure ? https : http).request(parsed, {
      method: 'POST',
      agent: secure ? policy.httpsAgent : policy.httpAgent,
      headers: requestHeaders(headers, payload.length),
    });
  } catch (err) {
    // A header value node refuses (a control character): nothing was sent.
    return fail('failed', (err as Error).message);
  }
  return answer(req, payload, parsed, policy, started);
}

function requestHeaders(headers: Record<string, string>, length: number): Record<string, string> {
  const sent: Record<string, string> = { 'user-agent': 'convo-messaging webhooks' };
  for (const [name, value] of Object.entries(headers)) if (!RESERVED_HEADERS.has(name.toLowerCase())) sent[name] = value;
  sent['content-type'] = 'application/json';
  sent['content-length'] = String(length);
  return sent;
}

/** Sends the request and settles once: on the (capped) answer, an error, or the deadline. */
function answer(
  req: http.ClientRequest,
  payload: Buffer,
  url: URL,
  policy: WebhookPolicy,
  started: number,
): Promise<WebhookResult> {
  return new Promise((resolve) => {
    const secure = url.protocol === 'https:';
    let response: Pick<WebhookResult, 'status' | 'retryAfterSeconds' | 'responseHeaders'> | undefined;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let received = 0;
    // Where the connection got to when an error came: it tells a refused connection from a failed
    // handshake from a failure after the request went out.
    let connected = false;
    let secured = false;
    let done = false;
    // One hard stop, settled here rather than by the request's error: a request still waiting for a
    // pooled connection reports its destruction only once it gets one.
    const timer = setTimeout(() => {
      finish({ reason: 'timeout', message: `no complete answer from ${url.host} within ${policy.timeoutMs} ms` });
      req.destroy();
    }, policy.timeoutMs);
    const finish = (error?: WebhookResult['error']) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const status = response?.status;
      resolve({
        ok: !error && status !== undefined && status >= 200 && status < 300,
        ...response,
        ...(response ? { responseBody: new StringDecoder('utf8').write(Buffer.concat(kept)) } : {}),
        durationMs: Math.round(performance.now() - started),
        ...(error ? { error } : {}),
      });
    };

    req.on('socket', (socket) => {
      if (!socket.connecting) {
        connected = secured = true;
        return;
      }
      socket.once('connect', () => (connected = true));
      socket.once('secureConnect', () => (secured = true));
    });
    req.on('error', (err) => {
      if (err instanceof FetchRefused && err.reason === 'refused_address')
        finish({ reason: 'refused_address', message: err.message });
      else if (!connected) finish({ reason: 'connect_failed', message: `${url.host}: ${err.message}` });
      else if (secure && !secured) finish({ reason: 'tls', message: `${url.host}: ${err.message}` });
      else finish({ reason: 'failed', message: `${url.host}: ${err.message}` });
    });
    req.on('response', (res) => {
      response = {
        status: res.statusCode,
        retryAfterSeconds: parseRetryAfter(res.headers['retry-after']),
        responseHeaders: keptHeaders(res.headers),
      };
      res.on('data', (chunk: Buffer) => {
        if (keptBytes < RESPONSE_BODY_BYTES) {
          const part = chunk.subarray(0, RESPONSE_BODY_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        received += chunk.length;
        if (received > DRAIN_BYTES) {
          finish();
          res.destroy();
        }
      });
      res.on('end', () => finish());
      res.on('error', (err) => finish({ reason: 'failed', message: `${url.host}: ${err.message}` }));
      res.on('close', () =>
        finish(res.complete ? undefined : { reason: 'failed', message: `${url.host} closed the connection mid-answer` }),
      );
    });
    req.end(payload);
  });
}
