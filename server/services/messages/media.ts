import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { messages } from '@/db/schema';
import { AppError } from '@/server/errors';
import { fetchPublic, FetchRefused, type FetchPolicy } from '@/server/lib/public-fetch';
import { readCapped } from '@/server/lib/read-capped';
import { mediaDisposition } from '@/server/shared/media-types';

/**
 * MMS media of a stored message, fetched on demand through our own route (docs/api.md#mms): the
 * browser never talks to Twilio, Twilio's credentials never leave the server, and only a message's
 * own media can be fetched (messageMedia), so the route is no general-purpose proxy.
 */

/** Past this, the fetch is cut off while it streams (Twilio's own MMS limit is 5 MB). */
export const MEDIA_MAX_BYTES = 5 * 1024 * 1024;

/** Where Twilio media may come from, and the credentials for it (server/env.ts). */
export type MediaSource = { accountSid?: string; authToken?: string; apiBaseUrl?: string };

const TWILIO_ORIGIN = 'https://api.twilio.com';
const MEDIA_PATH =
  /^\/2010-04-01\/Accounts\/(AC[0-9A-Za-z]{32})\/Messages\/([A-Za-z]{2}[0-9A-Za-z]{32})\/Media\/[A-Za-z]{2}[0-9A-Za-z]{32}$/;

function allowedOrigins(source: MediaSource): string[] {
  return source.apiBaseUrl ? [TWILIO_ORIGIN, new URL(source.apiBaseUrl).origin] : [TWILIO_ORIGIN];
}

/**
 * The message sid a Twilio media URL we may fetch names (`…/Messages/{sid}/Media/…`), or null for
 * any other URL: Twilio's API host (or the configured API base, the fake Twilio in tests), no
 * credentials, query or fragment in the URL, the media path of a message, and — when an account is
 * configured — that account's, so our credentials are only ever shown to Twilio for our own media.
 */
export function twilioMediaMessageSid(raw: string, source: MediaSource): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash) return null;
  if (!allowedOrigins(source).includes(url.origin)) return null;
  const match = MEDIA_PATH.exec(url.pathname);
  if (!match) return null;
  return !source.accountSid || match[1] === source.accountSid ? match[2]! : null;
}

export type FetchedMedia = { bytes: Buffer; contentType: string; disposition: 'inline' | 'attachment' };

export class MediaUnavailable extends Error {
  constructor(
    readonly status: 415 | 502,
    message: string,
  ) {
    super(message);
    this.name = 'MediaUnavailable';
  }
}

/** Redirects followed in all, on Twilio's hosts and elsewhere together. */
const MAX_REDIRECTS = 3;

export type MediaFetchOptions = {
  /** The whole fetch: every hop, on Twilio and elsewhere, and the body. */
  timeoutMs?: number;
  /** How hosts other than Twilio's are reached (tests: their own resolver, address rule and certificate). */
  elsewhere?: Pick<FetchPolicy, 'resolve' | 'isAllowedAddress' | 'ca'>;
};

/**
 * A redirect is followed to https only, never down to http, wherever it comes from: the one
 * exception is a hop that stays on TWILIO_API_BASE_URL's own origin, which the operator configured
 * (plain http for the fake Twilio in tests) and whose first request was already made.
 */
function mayFollow(next: URL, from: URL, source: MediaSource): boolean {
  if (next.protocol === 'https:') return true;
  return !!source.apiBaseUrl && next.origin === from.origin && from.origin === new URL(source.apiBaseUrl).origin;
}

/**
 * Fetches one Twilio media URL (already checked by twilioMediaMessageSid). Basic auth goes with the
 * request to Twilio when an account is configured (required when the account enforces HTTP auth
 * for media, harmless otherwise). Twilio answers with a redirect to its storage: one on an allowed
 * origin is followed as is; one elsewhere is fetched without credentials, public addresses only.
 * Every redirect must be https (mayFollow), at most MAX_REDIRECTS of them; one deadline covers the
 * whole fetch, whatever the number of hops. The body is cut off past MEDIA_MAX_BYTES; the type
 * must be on the allow-list.
 */
export async function fetchTwilioMedia(url: string, source: MediaSource, options: MediaFetchOptions = {}): Promise<FetchedMedia> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  const headers: Record<string, string> = {};
  if (source.accountSid && source.authToken) {
    headers.authorization = `Basic ${Buffer.from(`${source.accountSid}:${source.authToken}`).toString('base64')}`;
  }
  // One signal for every hop on Twilio's hosts and their bodies: the deadline is the fetch's, not each hop's.
  const signal = AbortSignal.timeout(timeoutMs);
  let current = new URL(url);
  for (let redirects = 0; ; redirects++) {
    const res = await fetch(current, { headers, redirect: 'manual', signal }).catch((err: Error) => {
      throw new MediaUnavailable(502, `media host unreachable: ${err.name}`);
    });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      if (redirects >= MAX_REDIRECTS) throw new MediaUnavailable(502, 'too many redirects');
      const next = new URL(location, current);
      if (!mayFollow(next, current, source)) throw new MediaUnavailable(502, 'media redirect is not https');
      if (!allowedOrigins(source).includes(next.origin)) {
        return fetchElsewhere(next, deadline, MAX_REDIRECTS - redirects - 1, options.elsewhere);
      }
      current = next;
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new MediaUnavailable(502, `media host answered ${res.status}`);
    }
    const contentType = res.headers.get('content-type');
    const disposition = mediaDisposition(contentType);
    if (!disposition) {
      await res.body?.cancel();
      throw new MediaUnavailable(415, 'This type of media is not served');
    }
    return { bytes: await readLimited(res), contentType: bareType(contentType), disposition };
  }
}

/** Twilio's storage (or wherever it sent us): no credentials, https only, public addresses, in the time left. */
async function fetchElsewhere(
  target: URL,
  deadline: number,
  redirectsLeft: number,
  policy: MediaFetchOptions['elsewhere'],
): Promise<FetchedMedia> {
  const timeLeft = deadline - Date.now();
  if (timeLeft <= 0) throw new MediaUnavailable(502, 'media fetch timed out');
  try {
    const { bytes, contentType } = await fetchPublic(target.toString(), {
      ...policy,
      maxBytes: MEDIA_MAX_BYTES,
      timeoutMs: timeLeft,
      maxRedirects: redirectsLeft,
      httpsOnly: true,
    });
    const disposition = mediaDisposition(contentType);
    if (!disposition) throw new MediaUnavailable(415, 'This type of media is not served');
    return { bytes, contentType: bareType(contentType), disposition };
  } catch (err) {
    if (err instanceof FetchRefused) {
      throw new MediaUnavailable(
        502,
        err.reason === 'too_large' ? `media over ${MEDIA_MAX_BYTES} bytes` : `media not reachable (${err.reason})`,
      );
    }
    throw err;
  }
}

const bareType = (contentType: string | null) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

async function readLimited(res: Response): Promise<Buffer> {
  const tooLarge = () => new MediaUnavailable(502, `media over ${MEDIA_MAX_BYTES} bytes`);
  if (Number(res.headers.get('content-length') ?? 0) > MEDIA_MAX_BYTES) {
    await res.body?.cancel();
    throw tooLarge();
  }
  // A timeout or a reset halfway through the body is the provider failing, not us.
  const bytes = await readCapped(res.body, MEDIA_MAX_BYTES).catch((err: Error) => {
    throw new MediaUnavailable(502, `media body failed: ${err.name}`);
  });
  if (bytes === null) throw tooLarge();
  return bytes;
}

/** What a message's media route may serve: one of our uploads, or one Twilio media URL. */
export type MessageMedia = { kind: 'upload'; mediaId: number } | { kind: 'twilio'; url: string };

/**
 * The `index`th attachment of a message of this business, when it is that message's own media
 * (docs/api.md#mms): an upload of ours on an outbound SMS (read by business and id, as Twilio gets
 * it through our signed URL), or, on an inbound SMS that Twilio delivered, Twilio media whose URL
 * names that very message's sid (`…/Messages/{its sid}/Media/…`). Anything else is null, and
 * nothing is fetched: a URL stored on another message (an email recorded with another tenant's MMS
 * URL as an attachment, an outbound `media_urls` entry) must not make our credentials fetch it.
 * 404 for another business's message or a missing index.
 */
export async function messageMedia(
  businessId: number,
  messageId: number,
  index: number,
  source: MediaSource,
  tx: Tx = db,
): Promise<MessageMedia | null> {
  const [row] = await tx
    .select({
      attachments: messages.attachments,
      channel: messages.channel,
      direction: messages.direction,
      provider: messages.provider,
      providerMessageId: messages.providerMessageId,
    })
    .from(messages)
    .where(and(eq(messages.id, messageId), eq(messages.businessId, businessId)));
  if (!row) throw AppError.notFound('Message');
  const attachment = row.attachments?.[index];
  if (!attachment) throw AppError.notFound('Media');
  if (row.channel !== 'sms') return null;
  if (attachment.media_id !== undefined) {
    return row.direction === 'outbound' ? { kind: 'upload', mediaId: attachment.media_id } : null;
  }
  if (row.direction !== 'inbound' || row.provider !== 'twilio' || !row.providerMessageId || !attachment.url) return null;
  return twilioMediaMessageSid(attachment.url, source) === row.providerMessageId ? { kind: 'twilio', url: attachment.url } : null;
}

/**
 * The response: the bytes with headers that keep a browser from running or sniffing them.
 * `cacheSeconds`: how long a private cache may keep them (never longer than they may be served).
 */
export function mediaResponse(media: FetchedMedia, name: string, cacheSeconds = 3600): Response {
  const extension =
    media.contentType
      .split('/')[1]!
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 8) || 'bin';
  return new Response(new Uint8Array(media.bytes), {
    status: 200,
    headers: {
      'Content-Type': media.contentType,
      'Content-Length': String(media.bytes.length),
      'Content-Disposition': `${media.disposition}; filename="${name}.${extension}"`,
      'Cache-Control': `private, max-age=${cacheSeconds}`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cross-Origin-Resource-Policy': 'same-origin',
    },
  });
}
