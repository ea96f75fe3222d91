import http from 'node:http';
import twilio from 'twilio';
import type RequestClientTypes from 'twilio/lib/base/RequestClient';
import type TwilioResponse from 'twilio/lib/http/response';
import { ProviderError, type SmsProvider, type SmsSendResult } from './types';

/**
 * Twilio Messaging through the official `twilio` client. Transport only: no retries here (the
 * worker retries transient failures), no database.
 *
 * `apiBaseUrl` (e.g. the fake of server/testing/fake-twilio.ts) replaces the scheme, host and port
 * of every request the client makes (`https://api.twilio.com/2010-04-01/...` → `${apiBaseUrl}/2010-04-01/...`),
 * keeping path and query; everything else (Basic auth, form encoding, JSON parsing, RestException)
 * stays the real client's.
 */
type TwilioProviderOptions = {
  accountSid: string;
  authToken: string;
  /** e.g. `http://127.0.0.1:4010`; unset = the real `https://api.twilio.com`. */
  apiBaseUrl?: string;
  /** Whole-request deadline in ms (connect + answer). Default 10 000. */
  timeoutMs?: number;
};

const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * Sockets per host. twilio's default is 20 (and only 5 kept idle), which caps throughput at
 * 20 / latency (≈ 100 sends/s at 200 ms) and churns connections under bursts. Twilio's own
 * per-account concurrency limit is about 100 in-flight API requests.
 */
const MAX_SOCKETS = 100;

type RequestOptions<T> = RequestClientTypes.RequestOptions<T>;

class TwilioHttpClient extends twilio.RequestClient {
  private readonly base: string | null;
  private readonly deadlineMs: number;

  constructor(apiBaseUrl: string | undefined, timeoutMs: number) {
    super({
      timeout: timeoutMs,
      keepAlive: true,
      maxSockets: MAX_SOCKETS,
      maxFreeSockets: MAX_SOCKETS,
      maxTotalSockets: MAX_SOCKETS,
      autoRetry: false,
    });
    if (apiBaseUrl) {
      const base = new URL(apiBaseUrl);
      this.base = `${base.protocol}//${base.host}${trimEnd(base.pathname, '/')}`;
      if (base.protocol === 'http:') {
        // The parent only builds an https.Agent; without this, plain-http requests would go
        // through Node's global agent (no socket cap, no idle timeout we control).
        this.axios.defaults.httpAgent = new http.Agent({
          keepAlive: true,
          maxSockets: MAX_SOCKETS,
          maxFreeSockets: MAX_SOCKETS,
          timeout: timeoutMs,
        });
      }
    } else {
      this.base = null;
    }
    this.deadlineMs = timeoutMs;
  }

  override request<TData>(opts: RequestOptions<TData>): Promise<TwilioResponse<TData>> {
    if (this.base !== null) {
      const uri = new URL(opts.uri);
      opts = { ...opts, uri: this.base + uri.pathname + uri.search };
    }
    const pending = super.request(opts);
    // axios' own `timeout` (set from the constructor's) is a connect timer plus a socket-inactivity
    // timer: a server trickling bytes never trips it. This makes `timeoutMs` a hard deadline for
    // the caller; the abandoned request still ends at axios' inactivity timeout. (A per-request
    // AbortSignal.timeout would cancel it outright, but costs measurably more per request at the
    // worker's sending rates, bench:send.)
    const ms = opts.timeout || this.deadlineMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineError(ms)), ms + 50);
    });
    return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
  }
}

class DeadlineError extends Error {
  readonly code = 'ETIMEDOUT_DEADLINE';
  constructor(ms: number) {
    super(`Twilio request exceeded ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

export { mapTwilioMessageStatus } from './twilio-status';
import { mapTwilioMessageStatus } from './twilio-status';
import { trimEnd } from '@/server/lib/text';
import { twilioErrorMessage } from '@/server/shared/provider-errors';

/**
 * Network errors raised before the request could reach Twilio: nothing was sent, so sending again
 * is safe. Every other failure after the request left (a reset, a timeout, a 5xx, an answer we
 * cannot read) may have created the message.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);

/** Timeout/abort codes (axios' own timeout is ECONNABORTED; our deadline is a TimeoutError). */
const TIMEOUT_CODES = new Set([
  'ECONNABORTED',
  'ERR_CANCELED',
  'ABORT_ERR',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'ETIMEDOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

/**
 * A ProviderError for anything the twilio client threw:
 *  - `permanent`: a 4xx other than 429, with Twilio's code (21610 = opted out), or the SDK's own
 *    parameter checks, which fail before any request;
 *  - `transient`: certainly not sent — a 429, or a connection that was never made;
 *  - `unknown`: Twilio may have created the message — a 5xx, a timeout or reset after the request
 *    left, a 2xx we cannot read, anything else. The worker looks the message up at Twilio before
 *    any resend, so an ambiguous answer never becomes a second text.
 */
function classifyTwilioError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as { status?: unknown; code?: unknown; message?: unknown; name?: unknown; cause?: unknown };
  const message = typeof e.message === 'string' && e.message ? e.message : String(err);

  if (typeof e.status === 'number') {
    const status = e.status;
    const twilioCode = typeof e.code === 'number' && e.code > 0 ? e.code : null;
    const code = twilioCode !== null ? String(twilioCode) : `http_${status}`;
    // Twilio's codes get plain words for staff (server/shared/provider-errors.ts), the code kept in front.
    const text = twilioCode !== null ? twilioErrorMessage(twilioCode, message) : message;
    if (status === 429) return new ProviderError('transient', code, text);
    if (status >= 400 && status < 500) return new ProviderError('permanent', code, text, twilioCode === 21610);
    return new ProviderError('unknown', code, text);
  }

  const code = typeof e.code === 'string' ? e.code : undefined;
  const causeCode =
    e.cause && typeof (e.cause as { code?: unknown }).code === 'string' ? (e.cause as { code: string }).code : undefined;
  if ((code !== undefined && TIMEOUT_CODES.has(code)) || e.name === 'TimeoutError' || e.name === 'AbortError') {
    return new ProviderError('unknown', 'timeout', message);
  }
  const networkCode = code !== undefined && /^E[A-Z_]+$/.test(code) ? code : causeCode;
  if (networkCode !== undefined && NOT_SENT_CODES.has(networkCode)) return new ProviderError('transient', networkCode, message);
  if (networkCode !== undefined) return new ProviderError('unknown', networkCode, message);
  if (/timeout|timed out/i.test(message)) return new ProviderError('unknown', 'timeout', message);
  if (/socket hang up/i.test(message)) return new ProviderError('unknown', 'ECONNRESET', message);
  if (/^Required parameter/.test(message)) return new ProviderError('permanent', 'invalid_request', message);
  return new ProviderError('unknown', code ?? 'unknown', message);
}

type TwilioMessageLike = { sid: string; status: string; numSegments?: string | number | null; errorCode?: number | null };

function toResult(message: TwilioMessageLike): SmsSendResult {
  if (typeof message.sid !== 'string' || !message.sid) {
    // A 2xx without a SID: we cannot tell whether Twilio created the message.
    throw new ProviderError('unknown', 'bad_response', 'Twilio answered without a message SID');
  }
  const segments = Number(message.numSegments);
  return {
    providerMessageId: message.sid,
    status: mapTwilioMessageStatus(String(message.status ?? '')) ?? 'queued',
    ...(Number.isFinite(segments) && segments > 0 ? { segments } : {}),
    // A message found by reconciliation may already have failed at Twilio: keep its reason.
    ...(message.errorCode ? { errorCode: String(message.errorCode) } : {}),
  };
}

const FIND_SENT_PAGE_SIZE = 100;
const FIND_SENT_MAX_PAGES = 20;

/** How far before `since` a message may have been created and still count (clock skew). */
const FIND_SENT_SKEW_MS = 60_000;

export function createTwilioProvider(options: TwilioProviderOptions): SmsProvider {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const httpClient = new TwilioHttpClient(options.apiBaseUrl, timeoutMs);
  const client = twilio(options.accountSid, options.authToken, {
    httpClient,
    autoRetry: false,
  });

  /**
   * The pair's messages, newest first, page by page until one created before `cutoff`: however
   * many were sent to the client since (a busy client, a bulk send), the one looked for is among
   * them. Past FIND_SENT_MAX_PAGES pages the answer is "unknown", never "not sent".
   */
  async function createdSince(query: { to: string; from: string }, cutoff: number) {
    try {
      const seen = [];
      // nextPage() is typed as the generic Page; the instances are the same MessageInstance.
      let page: {
        instances: Awaited<ReturnType<typeof client.messages.page>>['instances'];
        nextPage(): Promise<unknown> | undefined;
      } = await client.messages.page({ ...query, pageSize: FIND_SENT_PAGE_SIZE });
      for (let pages = 1; ; pages++) {
        seen.push(...page.instances);
        const oldest = page.instances.at(-1);
        if (!oldest || oldest.dateCreated.getTime() < cutoff) return seen;
        if (pages >= FIND_SENT_MAX_PAGES) {
          throw new ProviderError(
            'unknown',
            'lookup_too_long',
            `Over ${FIND_SENT_MAX_PAGES * FIND_SENT_PAGE_SIZE} messages to this number since the attempt; cannot tell whether it was sent`,
          );
        }
        const next = page.nextPage();
        if (!next) return seen;
        page = (await next) as typeof page;
      }
    } catch (err) {
      throw classifyTwilioError(err);
    }
  }

  return {
    name: 'twilio',

    async send(request) {
      let message;
      try {
        message = await client.messages.create({
          to: request.to,
          from: request.from,
          body: request.body,
          statusCallback: request.statusCallback,
          ...(request.mediaUrls && request.mediaUrls.length > 0 ? { mediaUrl: request.mediaUrls } : {}),
        });
      } catch (err) {
        throw classifyTwilioError(err);
      }
      return toResult(message);
    },

    async findSent({ to, from, body, since, excluding = [] }) {
      const cutoff = since.getTime() - FIND_SENT_SKEW_MS;
      const pick = (messages: Array<TwilioMessageLike & { body: string; dateCreated: Date }>) => {
        let best: (typeof messages)[number] | null = null;
        for (const m of messages) {
          if (m.body !== body || excluding.includes(m.sid)) continue;
          const created = m.dateCreated instanceof Date ? m.dateCreated.getTime() : NaN;
          if (!(created >= cutoff)) continue;
          if (!best || created > best.dateCreated.getTime()) best = m;
        }
        return best;
      };
      // By creation time, not DateSent: a message still queued at Twilio has no date_sent yet.
      const found = pick(await createdSince({ to, from }, cutoff));
      return found ? toResult(found) : null;
    },
  };
}
