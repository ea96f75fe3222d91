import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';

/**
 * A local stand-in for the part of Twilio's REST API the SMS provider uses, good enough for the
 * real `twilio` client (pointed here with `createTwilioProvider({ apiBaseUrl: fake.url })`):
 *
 * - `POST /2010-04-01/Accounts/{sid}/Messages.json` (form-encoded, repeated `MediaUrl`) → 201 JSON
 * - `GET  /2010-04-01/Accounts/{sid}/Messages.json` with `To`, `From`, `DateSent`, `DateSent>`,
 *   `DateSent<` (day granularity, as Twilio), `PageSize`, `Page` → a list page, newest first
 * - `GET  /2010-04-01/Accounts/{sid}/Messages/{Sid}.json`
 *
 * - `GET  /2010-04-01/Accounts/{sid}/Messages/{MM}/Media/{ME}` (media added with `addMedia`) → a 302
 *   to `/media-store/{ME}`, which answers the bytes without auth, as Twilio's storage does
 *
 * HTTP Basic auth is checked against accountSid/authToken (401 + Twilio error 20003 otherwise).
 * Errors use Twilio's legacy body `{ code, message, more_info, status }`. Status callbacks are
 * sent on demand (`sendStatusCallbacks`), signed like Twilio does. No logging, no framework: the
 * per-request overhead is a body parse and a JSON.stringify.
 */

type FakeTwilioMessage = {
  sid: string;
  accountSid: string;
  to: string;
  /** null when only a MessagingServiceSid was given (status `accepted`). */
  from: string | null;
  body: string;
  statusCallback: string | null;
  mediaUrls: string[];
  messagingServiceSid: string | null;
  /** The current status: the initial one, then whatever `sendStatusCallbacks` last sent. */
  status: string;
  numSegments: number;
  errorCode: number | null;
  dateCreated: Date;
  dateUpdated: Date;
};

/**
 * A reply chosen by `failNext` or a behavior. A 2xx status accepts the message (optionally with
 * another initial `messageStatus` or `numSegments`); anything else answers Twilio's error JSON.
 */
export type FakeTwilioReply = {
  status: number;
  code?: number;
  message?: string;
  messageStatus?: string;
  numSegments?: number;
  /**
   * Create the message anyway, then answer `status` (an error, or a 2xx with `sidless` set): the
   * ambiguous outcomes a client cannot tell from a refusal.
   */
  acceptedAnyway?: boolean;
  /** With a 2xx: answer a body without a `sid`. */
  sidless?: boolean;
};

export type FakeTwilioCreateRequest = {
  to: string;
  from: string | null;
  body: string;
  mediaUrls: string[];
  statusCallback: string | null;
  messagingServiceSid: string | null;
  /** Every form field as received (repeated names keep all values). */
  params: URLSearchParams;
};

/** Return a reply to override the default answer to a create, or null/undefined for the default. */
type FakeTwilioBehavior = (request: FakeTwilioCreateRequest) => FakeTwilioReply | null | undefined | void;

type FakeTwilioCallbackResult = { status: number; body: string; params: Record<string, string>; signature: string };

export type FakeTwilio = {
  /** e.g. `http://127.0.0.1:54321` (no trailing slash). */
  readonly url: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Every accepted message, oldest first. */
  readonly messages: FakeTwilioMessage[];
  /** API requests received (including rejected and hung ones). */
  readonly requests: number;
  /** Stores media as an inbound MMS would carry it and returns its Twilio-style MediaUrl. */
  addMedia(bytes: Buffer, contentType: string): string;
  /** Media requests received: which URL, and whether they carried our Basic auth. */
  readonly mediaRequests: { path: string; authenticated: boolean }[];
  /** The next `n` creates answer `reply` (e.g. `{ status: 500 }` or `{ status: 400, code: 21610 }`). */
  failNext(n: number, reply: FakeTwilioReply): void;
  /** Per-create custom replies (checked after `failNext`); null removes it. */
  setBehavior(fn: FakeTwilioBehavior | null): void;
  /**
   * The next `n` API requests (any route) are never answered (`'hang'`, the default: the client
   * has to time out) or have their socket destroyed (`'reset'`: the client sees ECONNRESET).
   */
  hangNext(n: number, mode?: 'hang' | 'reset'): void;
  /**
   * POSTs one signed status callback per status, in the order given, to the message's
   * StatusCallback URL, awaiting each answer. Params: MessageSid, SmsSid, MessageStatus,
   * SmsStatus, AccountSid, From, To, ApiVersion, MessagingServiceSid when the message has one,
   * ErrorCode when given (on every callback of this call), plus `extraParams`. The signed URL is
   * the StatusCallback exactly as given minus any `#fragment` (Twilio never sends those).
   */
  sendStatusCallbacks(
    sid: string,
    statuses: string[],
    opts?: { errorCode?: string; extraParams?: Record<string, string> },
  ): Promise<FakeTwilioCallbackResult[]>;
  close(): Promise<void>;
};

const API_PREFIX = '/2010-04-01/Accounts/';
const MEDIA_RE = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\/[^/]+\/Media\/([^/]+)$/;
const MEDIA_STORE_RE = /^\/media-store\/([^/]+)$/;
const MESSAGES_RE = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages(?:\/([^/]+))?\.json$/;

/** Twilio's "magic" test numbers, as a behavior: `fake.setBehavior(twilioTestNumberBehavior)`. */
export const twilioTestNumberBehavior: FakeTwilioBehavior = (req) => {
  switch (req.to) {
    case '+15005550001':
      return { status: 400, code: 21211, message: `The 'To' number ${req.to} is not a valid phone number.` };
    case '+15005550002':
      return {
        status: 400,
        code: 21612,
        message: `The 'To' phone number: ${req.to}, is not currently reachable using the 'From' phone number: ${req.from} via SMS.`,
      };
    case '+15005550003':
      return {
        status: 400,
        code: 21408,
        message: `Permission to send an SMS has not been enabled for the region indicated by the 'To' number: ${req.to}.`,
      };
    case '+15005550004':
      return { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' };
    case '+15005550009':
      return { status: 400, code: 21614, message: `'To' number ${req.to} is not a valid mobile number` };
  }
  switch (req.from) {
    case '+15005550001':
      return {
        status: 400,
        code: 21212,
        message: `The 'From' number ${req.from} is not a valid phone number, shortcode, or alphanumeric sender ID.`,
      };
    case '+15005550007':
      return {
        status: 400,
        code: 21606,
        message: `The From phone number ${req.from} is not a valid, SMS-capable inbound phone number or short code for your account.`,
      };
    case '+15005550008':
      return { status: 400, code: 21611, message: `This 'From' number has exceeded the maximum number of queued messages` };
  }
  return null;
};

const DEFAULT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Authenticate',
  404: 'The requested resource was not found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export async function startFakeTwilio(
  /** `port`: a fixed one (a server configured before the fake starts, as in the browser tests); any free one by default. */
  options: { accountSid?: string; authToken?: string; latencyMs?: number; port?: number } = {},
): Promise<FakeTwilio> {
  const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  const latencyMs = options.latencyMs ?? 0;
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

  const messages: FakeTwilioMessage[] = [];
  const bySid = new Map<string, FakeTwilioMessage>();
  let requests = 0;
  let failQueue: { remaining: number; reply: FakeTwilioReply } | null = null;
  let behavior: FakeTwilioBehavior | null = null;
  let hang: { remaining: number; mode: 'hang' | 'reset' } | null = null;
  const media = new Map<string, { bytes: Buffer; contentType: string }>();
  const mediaRequests: { path: string; authenticated: boolean }[] = [];

  function send(res: http.ServerResponse, status: number, payload: unknown) {
    const json = JSON.stringify(payload);
    const write = () => {
      if (res.destroyed) return;
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    };
    if (latencyMs > 0) setTimeout(write, latencyMs);
    else write();
  }

  function sendError(res: http.ServerResponse, status: number, code?: number, message?: string) {
    const twilioCode =
      code ?? (status === 401 ? 20003 : status === 404 ? 20404 : status === 429 ? 20429 : status >= 500 ? 20500 : 21000);
    send(res, status, {
      code: twilioCode,
      message: message ?? DEFAULT_ERROR_MESSAGES[status] ?? `HTTP ${status}`,
      more_info: `https://www.twilio.com/docs/errors/${twilioCode}`,
      status,
    });
  }

  function handleCreate(res: http.ServerResponse, params: URLSearchParams) {
    const req: FakeTwilioCreateRequest = {
      to: params.get('To') ?? '',
      from: params.get('From'),
      body: params.get('Body') ?? '',
      mediaUrls: params.getAll('MediaUrl'),
      statusCallback: params.get('StatusCallback'),
      messagingServiceSid: params.get('MessagingServiceSid'),
      params,
    };
    let reply: FakeTwilioReply | null = null;
    if (failQueue && failQueue.remaining > 0) {
      reply = failQueue.reply;
      if (--failQueue.remaining === 0) failQueue = null;
    } else if (behavior) {
      reply = behavior(req) ?? null;
    }
    if (reply && (reply.status < 200 || reply.status >= 300) && !reply.acceptedAnyway) {
      return sendError(res, reply.status, reply.code, reply.message);
    }
    if (!req.to) return sendError(res, 400, 21604, "A 'To' phone number is required.");
    if (!req.from && !req.messagingServiceSid) return sendError(res, 400, 21603, "A 'From' phone number is required.");
    if (!req.body && req.mediaUrls.length === 0) return sendError(res, 400, 21602, 'Message body is required.');

    const now = new Date();
    const initialStatus = reply?.messageStatus ?? (req.messagingServiceSid ? 'accepted' : 'queued');
    const message: FakeTwilioMessage = {
      sid: `SM${randomBytes(16).toString('hex')}`,
      accountSid,
      to: req.to,
      from: req.from,
      body: req.body,
      statusCallback: req.statusCallback,
      mediaUrls: req.mediaUrls,
      messagingServiceSid: req.messagingServiceSid,
      status: initialStatus,
      // Twilio answers 0 segments when a Messaging Service picks the sender.
      numSegments: reply?.numSegments ?? (req.messagingServiceSid ? 0 : countSegments(req.body)),
      errorCode: null,
      dateCreated: now,
      dateUpdated: now,
    };
    messages.push(message);
    bySid.set(message.sid, message);
    if (reply && (reply.status < 200 || reply.status >= 300)) return sendError(res, reply.status, reply.code, reply.message);
    if (reply?.sidless) return send(res, reply.status, { ...toJson(message), sid: null });
    send(res, reply?.status ?? 201, toJson(message));
  }

  /** Media as an account with HTTP auth for media enforced serves it: the API URL needs auth, the store does not. */
  function serveMedia(req: http.IncomingMessage, res: http.ServerResponse, path: string) {
    const authenticated = req.headers.authorization === expectedAuth;
    mediaRequests.push({ path, authenticated });
    const api = MEDIA_RE.exec(path);
    if (api) {
      if (!authenticated) return sendError(res, 401, 20003, 'Authenticate');
      if (api[1] !== accountSid || !media.has(api[2]!))
        return sendError(res, 404, 20404, `The requested resource ${path} was not found`);
      res.writeHead(302, { Location: `/media-store/${api[2]}`, 'Content-Length': 0 });
      return res.end();
    }
    const stored = media.get(MEDIA_STORE_RE.exec(path)![1]!);
    if (!stored) return sendError(res, 404, 20404, `The requested resource ${path} was not found`);
    res.writeHead(200, { 'Content-Type': stored.contentType, 'Content-Length': stored.bytes.length });
    res.end(stored.bytes);
  }

  function handleList(res: http.ServerResponse, query: URLSearchParams) {
    const to = query.get('To');
    const from = query.get('From');
    const sentOn = dayOf(query.get('DateSent'));
    const sentAfter = dayOf(query.get('DateSent>'));
    const sentBefore = dayOf(query.get('DateSent<'));
    const pageSize = Math.min(Math.max(Number(query.get('PageSize')) || 50, 1), 1000);
    const page = Math.max(Number(query.get('Page')) || 0, 0);

    const matches: FakeTwilioMessage[] = [];
    // Newest first, as Twilio lists them.
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (to !== null && m.to !== to) continue;
      if (from !== null && m.from !== from) continue;
      if (sentOn !== null || sentAfter !== null || sentBefore !== null) {
        const day = m.dateCreated.toISOString().slice(0, 10);
        if (sentOn !== null && day !== sentOn) continue;
        if (sentAfter !== null && day < sentAfter) continue;
        if (sentBefore !== null && day > sentBefore) continue;
      }
      matches.push(m);
    }
    const start = page * pageSize;
    const slice = matches.slice(start, start + pageSize);
    const base = `${API_PREFIX}${accountSid}/Messages.json`;
    const pageUri = (p: number) => {
      const q = new URLSearchParams(query);
      q.set('PageSize', String(pageSize));
      q.set('Page', String(p));
      return `${base}?${q.toString()}`;
    };
    send(res, 200, {
      messages: slice.map(toJson),
      end: start + Math.max(slice.length - 1, 0),
      first_page_uri: pageUri(0),
      next_page_uri: start + pageSize < matches.length ? pageUri(page + 1) : null,
      page,
      page_size: pageSize,
      previous_page_uri: page > 0 ? pageUri(page - 1) : null,
      start,
      uri: pageUri(page),
    });
  }

  const server = http.createServer((req, res) => {
    requests++;
    if (hang && hang.remaining > 0) {
      const mode = hang.mode;
      if (--hang.remaining === 0) hang = null;
      req.resume();
      if (mode === 'reset') req.socket.destroy();
      // 'hang': never answer; close() destroys the socket.
      return;
    }
    const url = req.url ?? '/';
    if (req.method === 'GET' && (MEDIA_RE.test(url) || MEDIA_STORE_RE.test(url))) {
      req.resume();
      return serveMedia(req, res, url);
    }
    if (req.headers.authorization !== expectedAuth) {
      req.resume();
      return sendError(res, 401, 20003, 'Authenticate');
    }
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const match = MESSAGES_RE.exec(pathname);
    if (!match || match[1] !== accountSid) {
      req.resume();
      return sendError(res, 404, 20404, `The requested resource ${pathname} was not found`);
    }
    const sid = match[2];
    if (req.method === 'GET') {
      req.resume();
      if (sid === undefined) return handleList(res, query);
      const message = bySid.get(sid);
      if (!message) return sendError(res, 404, 20404, `The requested resource ${pathname} was not found`);
      return send(res, 200, toJson(message));
    }
    if (req.method === 'POST' && sid === undefined) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        handleCreate(res, new URLSearchParams(raw));
      });
      return;
    }
    req.resume();
    sendError(res, 405, 20004, 'Method not allowed');
  });
  // Longer than any client's idle keep-alive, so the client never reuses a socket we just closed.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  function toJson(m: FakeTwilioMessage) {
    const created = rfc2822(m.dateCreated);
    return {
      account_sid: m.accountSid,
      api_version: '2010-04-01',
      body: m.body,
      date_created: created,
      date_sent: created,
      date_updated: rfc2822(m.dateUpdated),
      direction: 'outbound-api',
      error_code: m.errorCode,
      error_message: null,
      from: m.from,
      messaging_service_sid: m.messagingServiceSid,
      num_media: String(m.mediaUrls.length),
      num_segments: String(m.numSegments),
      price: null,
      price_unit: 'USD',
      sid: m.sid,
      status: m.status,
      subresource_uris: {},
      to: m.to,
      uri: `${API_PREFIX}${m.accountSid}/Messages/${m.sid}.json`,
    };
  }

  return {
    url,
    accountSid,
    authToken,
    messages,
    mediaRequests,
    addMedia(bytes, contentType) {
      const sid = `ME${randomBytes(16).toString('hex')}`;
      media.set(sid, { bytes, contentType });
      return `${url}${API_PREFIX}${accountSid}/Messages/MM${randomBytes(16).toString('hex')}/Media/${sid}`;
    },
    get requests() {
      return requests;
    },
    failNext(n, reply) {
      failQueue = n > 0 ? { remaining: n, reply } : null;
    },
    setBehavior(fn) {
      behavior = fn;
    },
    hangNext(n, mode = 'hang') {
      hang = n > 0 ? { remaining: n, mode } : null;
    },
    async sendStatusCallbacks(sid, statuses, opts = {}) {
      const message = bySid.get(sid);
      if (!message) throw new Error(`fake-twilio: no message ${sid}`);
      if (!message.statusCallback) throw new Error(`fake-twilio: message ${sid} has no StatusCallback`);
      const hash = message.statusCallback.indexOf('#');
      const target = hash === -1 ? message.statusCallback : message.statusCallback.slice(0, hash);
      const results: FakeTwilioCallbackResult[] = [];
      for (const status of statuses) {
        const params: Record<string, string> = {
          AccountSid: accountSid,
          ApiVersion: '2010-04-01',
          From: message.from ?? '',
          MessageSid: sid,
          MessageStatus: status,
          SmsSid: sid,
          SmsStatus: status,
          To: message.to,
        };
        if (message.messagingServiceSid) params.MessagingServiceSid = message.messagingServiceSid;
        if (opts.errorCode !== undefined) params.ErrorCode = opts.errorCode;
        Object.assign(params, opts.extraParams);
        const signature = twilio.getExpectedTwilioSignature(authToken, target, params);
        message.status = status;
        message.dateUpdated = new Date();
        if (opts.errorCode !== undefined) message.errorCode = Number(opts.errorCode);
        const response = await fetch(target, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            'X-Twilio-Signature': signature,
            'I-Twilio-Idempotency-Token': randomBytes(16).toString('hex'),
            'User-Agent': 'TwilioProxy/1.1',
          },
          body: new URLSearchParams(params).toString(),
        });
        results.push({ status: response.status, body: await response.text(), params, signature });
      }
      return results;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** `Thu, 30 Jul 2015 20:12:31 +0000`, the only date format the SDK parses for messages. */
function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

/** The UTC day (`YYYY-MM-DD`) of a DateSent filter value (the SDK sends a full ISO date-time). */
function dayOf(value: string | null): string | null {
  if (value === null || value === '') return null;
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString().slice(0, 10);
}

const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENDED = new Set('^{}\\[~]|€\f');

/** SMS segments as Twilio bills them: GSM-7 160/153 septets, else UCS-2 70/67 UTF-16 units. */
export function countSegments(body: string): number {
  let septets = 0;
  let gsm = true;
  for (const ch of body) {
    if (GSM7_BASIC.has(ch)) septets += 1;
    else if (GSM7_EXTENDED.has(ch)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  const units = body.length;
  return units <= 70 ? 1 : Math.ceil(units / 67);
}
