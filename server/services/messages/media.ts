import { and, eq } from 'drizzle-orm';
import { db } from '@/db/client';
import { messages, type StoredAttachment } from '@/db/schema';
import { AppError } from '@/server/errors';
import { fetchPublic, FetchRefused } from '@/server/lib/public-fetch';
import { readCapped } from '@/server/lib/read-capped';

/**
 * MMS media of a stored message, fetched on demand through our own route (docs/api.md#mms): the
 * browser never talks to Twilio, Twilio's credentials never leave the server, and only Twilio's
 * media URLs of our own account can be fetched, so the route is no general-purpose proxy.
 */

/** Past this, the fetch is cut off while it streams (Twilio's own MMS limit is 5 MB). */
export const MEDIA_MAX_BYTES = 5 * 1024 * 1024;

/** Shown inline (an <img>): raster formats browsers decode and that cannot carry script. SVG is not among them. */
const INLINE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Served as downloads only (Content-Disposition: attachment): what phones commonly send besides pictures. */
const DOWNLOAD_TYPES = new Set([
  'image/heic',
  'image/heif',
  'application/pdf',
  'text/vcard',
  'text/x-vcard',
  'audio/mpeg',
  'audio/mp4',
  'audio/ogg',
  'audio/amr',
  'audio/3gpp',
  'video/mp4',
  'video/3gpp',
  'video/quicktime',
]);

/** Every type the media route may answer with, for the API reference. */
export const SERVED_MEDIA_TYPES: readonly string[] = [...INLINE_TYPES, ...DOWNLOAD_TYPES];

/** How a content type is served: inline, as a download, or not at all. */
export function mediaDisposition(contentType: string | null | undefined): 'inline' | 'attachment' | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (INLINE_TYPES.has(type)) return 'inline';
  if (DOWNLOAD_TYPES.has(type)) return 'attachment';
  return null;
}

/** Where Twilio media may come from, and the credentials for it (server/env.ts). */
export type MediaSource = { accountSid?: string; authToken?: string; apiBaseUrl?: string };

const TWILIO_ORIGIN = 'https://api.twilio.com';
const MEDIA_PATH =
  /^\/2010-04-01\/Accounts\/(AC[0-9A-Za-z]{32})\/Messages\/[A-Za-z]{2}[0-9A-Za-z]{32}\/Media\/[A-Za-z]{2}[0-9A-Za-z]{32}$/;

function allowedOrigins(source: MediaSource): string[] {
  return source.apiBaseUrl ? [TWILIO_ORIGIN, new URL(source.apiBaseUrl).origin] : [TWILIO_ORIGIN];
}

/**
 * True for a Twilio media URL we may fetch: Twilio's API host (or the configured API base, the
 * fake Twilio in tests), no credentials in the URL, the media path of a message, and — when an
 * account is configured — that account's, so our credentials are only ever shown to Twilio for
 * our own media.
 */
export function isTwilioMediaUrl(raw: string, source: MediaSource): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.username || url.password || url.search || url.hash) return false;
  if (!allowedOrigins(source).includes(url.origin)) return false;
  const match = MEDIA_PATH.exec(url.pathname);
  if (!match) return false;
  return !source.accountSid || match[1] === source.accountSid;
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

/**
 * Fetches one Twilio media URL (already checked by isTwilioMediaUrl). Basic auth goes with the
 * request to Twilio when an account is configured (required when the account enforces HTTP auth
 * for media, harmless otherwise). Twilio answers with a redirect to its storage: one on an allowed
 * origin is followed as is; one elsewhere is fetched without credentials, https only, public
 * addresses only. The body is cut off past MEDIA_MAX_BYTES; the type must be on the allow-list.
 */
export async function fetchTwilioMedia(url: string, source: MediaSource, timeoutMs = 10_000): Promise<FetchedMedia> {
  const headers: Record<string, string> = {};
  if (source.accountSid && source.authToken) {
    headers.authorization = `Basic ${Buffer.from(`${source.accountSid}:${source.authToken}`).toString('base64')}`;
  }
  const signal = AbortSignal.timeout(timeoutMs);
  let current = url;
  for (let hops = 0; hops < 3; hops++) {
    const res = await fetch(current, { headers, redirect: 'manual', signal }).catch((err: Error) => {
      throw new MediaUnavailable(502, `media host unreachable: ${err.name}`);
    });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const next = new URL(location, current);
      if (!allowedOrigins(source).includes(next.origin)) return fetchElsewhere(next, timeoutMs);
      current = next.toString();
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
  throw new MediaUnavailable(502, 'too many redirects');
}

async function fetchElsewhere(target: URL, timeoutMs: number): Promise<FetchedMedia> {
  if (target.protocol !== 'https:') throw new MediaUnavailable(502, 'media redirect is not https');
  try {
    const { bytes, contentType } = await fetchPublic(target.toString(), { maxBytes: MEDIA_MAX_BYTES, timeoutMs });
    const disposition = mediaDisposition(contentType);
    if (!disposition) throw new MediaUnavailable(415, 'This type of media is not served');
    return { bytes, contentType: bareType(contentType), disposition };
  } catch (err) {
    if (err instanceof FetchRefused) {
      throw new MediaUnavailable(502, err.reason === 'too_large' ? `media over ${MEDIA_MAX_BYTES} bytes` : 'media not reachable');
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

/** The `index`th attachment of a message of this business; 404 for another business's message or a missing index. */
export async function mediaAttachment(businessId: number, messageId: number, index: number): Promise<StoredAttachment> {
  const [row] = await db
    .select({ attachments: messages.attachments })
    .from(messages)
    .where(and(eq(messages.id, messageId), eq(messages.businessId, businessId)));
  if (!row) throw AppError.notFound('Message');
  const attachment = row.attachments?.[index];
  if (!attachment) throw AppError.notFound('Media');
  return attachment;
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
