import { createHash } from 'node:crypto';
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { mediaContents, mediaStorage, mediaUploads, messages } from '@/db/schema';
import { ConfigError, env, parseEnv } from '@/server/env';
import { runMaintenance } from '@/server/services/maintenance';
import { multipartBody } from '@/server/providers/webhook-requests';
import { MMS_MAX_BYTES } from '@/server/shared/limits';
import { createSmsNumber, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf, locs, restTenant, type Headers, type RestTenant } from '@/server/testing/http';
import { MEDIA_URL_TTL_SECONDS } from '@/server/shared/limits';
import { checkMediaLink, PUBLIC_MEDIA_PATH, signedMediaUrl } from './media-links';
import { attachUploads, deleteUnattachedUploads, UNATTACHED_UPLOAD_TTL_MS } from './uploads';

/**
 * MMS uploads (docs/api.md#mms-uploads): POST /businesses/{id}/media (forms, types, limits,
 * tenancy), media_ids on SMS queue items (422s by item, attachments in order), the timeline's
 * media route for them, the public signed route Twilio fetches them from (signature, expiry), and
 * their storage (one copy per content, the quota, the cleanup of uploads no message names).
 */

// MEDIA_STORAGE_QUOTA_BYTES as the route reads it (env()): lowered by the quota tests only.
const quota = vi.hoisted(() => ({ bytes: null as number | null }));
vi.mock('@/server/env', async (importOriginal) => {
  const mod = await importOriginal<typeof import('@/server/env')>();
  return {
    ...mod,
    env: () => {
      const e = mod.env();
      return quota.bytes === null ? e : { ...e, mediaStorageQuotaBytes: quota.bytes };
    },
  };
});
afterEach(() => {
  quota.bytes = null;
});

// A 1×1 PNG, and the first bytes of a JPEG and a GIF (the signature is what decides the type).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF jpeg body')]);
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00gif body', 'latin1');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let t: RestTenant;
beforeAll(async () => {
  t = await restTenant();
  await createSmsNumber(t.business.id);
});

const uploadRaw = (tenant: RestTenant, bytes: Buffer, contentType: string, headers: Headers = tenant.key) =>
  api.post(`${tenant.base}/media`, { headers: { ...headers, 'content-type': contentType }, body: bytes });

async function uploadForm(
  tenant: RestTenant,
  file: { bytes: Buffer; contentType: string; filename: string; field?: string },
  headers: Headers = tenant.key,
) {
  const form = await multipartBody({ note: 'ignored' }, [
    { field: file.field ?? 'file', filename: file.filename, contentType: file.contentType, content: file.bytes },
  ]);
  return api.post(`${tenant.base}/media`, { headers: { ...headers, 'content-type': form.contentType }, body: form.bytes });
}

/** Uploads `bytes` with the business key; its media_id. */
async function upload(tenant: RestTenant, bytes: Buffer = PNG): Promise<number> {
  const res = await uploadRaw(tenant, bytes, 'application/octet-stream');
  expect(res.status, await res.clone().text()).toBe(200);
  return (await jsonOf(res)).media_id as number;
}

async function uploadCount(businessId: number) {
  const [row] = await db.select({ n: count() }).from(mediaUploads).where(eq(mediaUploads.businessId, businessId));
  return row!.n;
}

describe('POST /businesses/{id}/media', () => {
  it('stores raw bytes sent with their type: the answer names the id, type, size and SHA-256; the row says who uploaded', async () => {
    const res = await uploadRaw(t, PNG, 'image/png');
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toEqual({
      media_id: expect.any(Number),
      content_type: 'image/png',
      size: PNG.length,
      sha256: sha256(PNG),
      filename: null,
      created_at: expect.stringMatching(/Z$/),
    });
    const [row] = await db.select().from(mediaUploads).where(eq(mediaUploads.id, body.media_id));
    expect(row).toMatchObject({ businessId: t.business.id, uploadedBy: 'api_key', staffId: null, apiKeyId: expect.any(Number) });
    const [content] = await db
      .select()
      .from(mediaContents)
      .where(and(eq(mediaContents.businessId, t.business.id), eq(mediaContents.sha256, row!.sha256)));
    expect(Buffer.compare(content!.bytes, PNG)).toBe(0);
  });

  it('takes a multipart form with the file in the part "file", keeping its name; a session uploads as its staff member', async () => {
    const res = await uploadForm(t, { bytes: JPEG, contentType: 'image/jpeg', filename: 'C:\\photos\\before me.jpg' }, t.session);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    // The name without its directories.
    expect(body).toMatchObject({
      content_type: 'image/jpeg',
      size: JPEG.length,
      sha256: sha256(JPEG),
      filename: 'before me.jpg',
    });
    const [row] = await db.select().from(mediaUploads).where(eq(mediaUploads.id, body.media_id));
    expect(row).toMatchObject({ uploadedBy: 'staff', staffId: t.owner.id, apiKeyId: null });

    // An encoded name (RFC 5987) may carry control characters and directories: both are dropped.
    const crafted = Buffer.concat([
      Buffer.from(
        `--XYZ\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''..%2F..%2Fbell%07%0A.png\r\nContent-Type: image/png\r\n\r\n`,
      ),
      PNG,
      Buffer.from('\r\n--XYZ--\r\n'),
    ]);
    const named = await api.post(`${t.base}/media`, {
      headers: { ...t.key, 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: crafted,
    });
    expect(named.status, await named.clone().text()).toBe(200);
    expect((await jsonOf(named)).filename).toBe('bell.png');

    const platform = await uploadRaw(t, GIF, 'image/gif', { 'x-api-key': PLATFORM_KEY() });
    expect(platform.status).toBe(200);
    const [byPlatform] = await db
      .select()
      .from(mediaUploads)
      .where(eq(mediaUploads.id, (await jsonOf(platform)).media_id));
    expect(byPlatform).toMatchObject({ uploadedBy: 'platform', contentType: 'image/gif' });
  });

  it('lets the bytes decide an untyped file, and accepts image/jpg for JPEG', async () => {
    for (const [bytes, declared, expected] of [
      [GIF, 'application/octet-stream', 'image/gif'],
      [JPEG, 'image/jpg', 'image/jpeg'],
      [PNG, 'image/png; charset=binary', 'image/png'],
    ] as const) {
      const res = await uploadRaw(t, bytes, declared);
      expect(res.status, declared).toBe(200);
      expect((await jsonOf(res)).content_type).toBe(expected);
    }
    const untypedPart = await uploadForm(t, { bytes: GIF, contentType: 'application/octet-stream', filename: 'x' });
    expect((await jsonOf(untypedPart)).content_type).toBe('image/gif');
  });

  it('refuses (415) other types, a file that is not what it claims, and anything that is not a JPEG, PNG or GIF; stores nothing', async () => {
    const before = await uploadCount(t.business.id);
    const cases: [Buffer, string, RegExp][] = [
      [Buffer.from('<svg onload="alert(1)"/>'), 'image/svg+xml', /image\/svg\+xml cannot be sent/],
      [Buffer.from('<html><script>alert(1)</script>'), 'text/html', /text\/html cannot be sent/],
      [Buffer.from('RIFF\0\0\0\0WEBPVP8 '), 'image/webp', /image\/webp cannot be sent/],
      [JPEG, 'image/png', /sent as image\/png but is image\/jpeg/],
      [Buffer.from('<html>'), 'application/octet-stream', /not a JPEG, PNG or GIF picture/],
      [Buffer.from('%PDF-1.4'), 'application/pdf', /application\/pdf cannot be sent/],
    ];
    for (const [bytes, type, message] of cases) {
      const res = await uploadRaw(t, bytes, type);
      expect(res.status, type).toBe(415);
      expect((await jsonOf(res)).detail).toMatch(message);
    }
    const disguised = await uploadForm(t, { bytes: Buffer.from('<html>'), contentType: 'image/gif', filename: 'cat.gif' });
    expect(disguised.status).toBe(415);
    expect(await uploadCount(t.business.id)).toBe(before);
  });

  it(`takes ${MMS_MAX_BYTES.toLocaleString('en-US')} bytes and refuses one more (413), raw or in a form; an empty file or a form without "file" is a 422, a broken form a 400`, async () => {
    const before = await uploadCount(t.business.id);
    const atLimit = Buffer.concat([PNG, Buffer.alloc(MMS_MAX_BYTES - PNG.length)]);
    const accepted = await uploadRaw(t, atLimit, 'image/png');
    expect(accepted.status).toBe(200);
    expect((await jsonOf(accepted)).size).toBe(MMS_MAX_BYTES);

    const over = Buffer.concat([atLimit, Buffer.alloc(1)]);
    expect((await uploadRaw(t, over, 'image/png')).status).toBe(413);
    expect((await uploadForm(t, { bytes: over, contentType: 'image/png', filename: 'big.png' })).status).toBe(413);
    // Past the body limit itself: refused before it is read whole.
    expect((await uploadRaw(t, Buffer.alloc(MMS_MAX_BYTES + 128 * 1024), 'image/png')).status).toBe(413);

    const empty = await uploadRaw(t, Buffer.alloc(0), 'image/png');
    expect(empty.status).toBe(422);
    expect(locs(await jsonOf(empty))).toEqual([['body']]);
    const wrongField = await uploadForm(t, { bytes: PNG, contentType: 'image/png', filename: 'a.png', field: 'picture' });
    expect(wrongField.status).toBe(422);
    expect(locs(await jsonOf(wrongField))).toEqual([['body', 'file']]);
    const broken = await api.post(`${t.base}/media`, {
      headers: { ...t.key, 'content-type': 'multipart/form-data' },
      body: PNG,
    });
    expect(broken.status).toBe(400);
    expect(await uploadCount(t.business.id)).toBe(before + 1);
  });

  it("refuses another business's credentials (403) and an unknown business (404); needs credentials (401)", async () => {
    const other = await restTenant();
    const before = await uploadCount(t.business.id);
    expect((await uploadRaw(t, PNG, 'image/png', other.key)).status).toBe(403);
    expect((await uploadRaw(t, PNG, 'image/png', other.session)).status).toBe(403);
    expect((await uploadRaw(t, PNG, 'image/png', {})).status).toBe(401);
    const unknown = await api.post('/api/v1/businesses/2147483000/media', {
      headers: { 'x-api-key': PLATFORM_KEY(), 'content-type': 'image/png' },
      body: PNG,
    });
    expect(unknown.status).toBe(404);
    expect(await uploadCount(t.business.id)).toBe(before);
  });
});

describe('media_ids on POST /businesses/{id}/sms', () => {
  const send = (tenant: RestTenant, items: Record<string, unknown>[]) =>
    api.post(`${tenant.base}/sms`, {
      headers: tenant.key,
      body: {
        sender_type: 'staff',
        messages: items.map((item, i) => ({ to_number: `+1415555${String(1000 + i)}`, message: 'Your new look', ...item })),
      },
    });

  async function messageCount(businessId: number) {
    const [row] = await db.select({ n: count() }).from(messages).where(eq(messages.businessId, businessId));
    return row!.n;
  }

  it('makes each upload an attachment of the message, after any media_urls, in order; the API lists its media_id', async () => {
    const png = await upload(t, PNG);
    const form = await uploadForm(t, { bytes: JPEG, contentType: 'image/jpeg', filename: 'after.jpg' });
    const jpeg = (await jsonOf(form)).media_id as number;
    const res = await send(t, [{ media_urls: ['https://cdn.example.com/a.png'], media_ids: [png, jpeg] }]);
    expect(res.status, await res.clone().text()).toBe(200);
    const [id] = (await jsonOf(res)).message_ids as number[];
    const [row] = await db.select().from(messages).where(eq(messages.id, id!));
    expect(row!.attachments).toEqual([
      { filename: 'media-0', content_type: null, url: 'https://cdn.example.com/a.png', size: null },
      { filename: 'media-1.png', content_type: 'image/png', url: null, size: PNG.length, media_id: png },
      { filename: 'after.jpg', content_type: 'image/jpeg', url: null, size: JPEG.length, media_id: jpeg },
    ]);
    const listed = await api.get(`${t.base}/conversations/${row!.conversationId}/messages`, { headers: t.key });
    const item = (await jsonOf(listed)).messages.find((m: { message_id: number }) => m.message_id === id);
    expect(item.attachments.map((a: { media_id: number | null }) => a.media_id)).toEqual([null, png, jpeg]);
  });

  it("is a 422 at messages[i].media_ids[j] for an unknown id or another business's upload; nothing is stored", async () => {
    const other = await restTenant();
    const foreign = await upload(other);
    const mine = await upload(t);
    const before = await messageCount(t.business.id);
    const res = await send(t, [{ media_ids: [mine] }, { media_ids: [mine, foreign] }, { media_ids: [2_000_000_000] }]);
    expect(res.status).toBe(422);
    const body = await jsonOf(res);
    expect(locs(body)).toEqual([
      ['body', 'messages', 1, 'media_ids', 1],
      ['body', 'messages', 2, 'media_ids', 0],
    ]);
    expect(body.detail[0].msg).toBe(`Media ${foreign} not found in this business`);
    expect(await messageCount(t.business.id)).toBe(before);
  });

  it('is a 422 past 10 media with media_urls, for an empty or malformed list, and past 5 MB together', async () => {
    const id = await upload(t);
    const cases: [Record<string, unknown>, unknown[]][] = [
      [{ media_ids: Array.from({ length: 11 }, () => id) }, ['body', 'messages', 0, 'media_ids']],
      [
        {
          media_ids: Array.from({ length: 4 }, () => id),
          media_urls: Array.from({ length: 7 }, (_, i) => `https://x.example/${i}`),
        },
        ['body', 'messages', 0, 'media_ids'],
      ],
      [{ media_ids: [] }, ['body', 'messages', 0, 'media_ids']],
      [{ media_ids: ['one'] }, ['body', 'messages', 0, 'media_ids', 0]],
      [{ media_ids: [0] }, ['body', 'messages', 0, 'media_ids', 0]],
    ];
    for (const [item, loc] of cases) {
      const res = await send(t, [item]);
      expect(res.status, JSON.stringify(item).slice(0, 80)).toBe(422);
      expect(locs(await jsonOf(res))).toContainEqual(loc);
    }
    const half = Buffer.concat([PNG, Buffer.alloc(MMS_MAX_BYTES / 2)]);
    const big = await upload(t, half);
    const tooMuch = await send(t, [{ media_ids: [big, big] }]);
    expect(tooMuch.status).toBe(422);
    expect(locs(await jsonOf(tooMuch))).toEqual([['body', 'messages', 0, 'media_ids']]);
    expect((await send(t, [{ media_ids: [big] }])).status).toBe(200);
  });

  it("serves an outbound upload to the business's callers through the message's media route, and to no one else", async () => {
    const id = await upload(t, GIF);
    const res = await send(t, [{ media_ids: [id] }]);
    const [messageId] = (await jsonOf(res)).message_ids as number[];
    for (const headers of [t.key, t.session]) {
      const media = await api.get(`${t.base}/messages/${messageId}/media/0`, { headers });
      expect(media.status).toBe(200);
      expect(Buffer.compare(Buffer.from(await media.arrayBuffer()), GIF)).toBe(0);
      expect(media.headers.get('content-type')).toBe('image/gif');
      expect(media.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const other = await restTenant();
    expect((await api.get(`${other.base}/messages/${messageId}/media/0`, { headers: other.key })).status).toBe(404);
    expect((await api.get(`${t.base}/messages/${messageId}/media/0`, { headers: other.key })).status).toBe(403);
  });
});

describe('the signed URL Twilio fetches an upload from', () => {
  it('is signed with MEDIA_URL_SECRET, or a key derived from SESSION_SECRET that is not the session secret itself', () => {
    const session = 'session-secret-0123456789';
    const derived = parseEnv({ SESSION_SECRET: session }).mediaUrlSecret;
    expect(derived).not.toContain(session);
    expect(parseEnv({ SESSION_SECRET: session }).mediaUrlSecret).toBe(derived);
    expect(parseEnv({ SESSION_SECRET: 'another-session-secret' }).mediaUrlSecret).not.toBe(derived);
    expect(parseEnv({ SESSION_SECRET: session, MEDIA_URL_SECRET: 'media-secret-0123456789' }).mediaUrlSecret).toBe(
      'media-secret-0123456789',
    );
    expect(() => parseEnv({ MEDIA_URL_SECRET: 'short' })).toThrow(ConfigError);
  });

  const pathOf = (url: string) => {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  };
  const parts = (url: string) => {
    const u = new URL(url);
    const [businessId, mediaId] = u.pathname
      .slice(PUBLIC_MEDIA_PATH.length + 1)
      .split('/')
      .map(Number);
    return {
      businessId: businessId!,
      mediaId: mediaId!,
      expires: Number(u.searchParams.get('expires')),
      signature: u.searchParams.get('signature')!,
    };
  };

  it('is PUBLIC_BASE_URL + the public route, and serves the exact bytes without credentials, cached no longer than it lives', async () => {
    const id = await upload(t, PNG);
    const url = signedMediaUrl(t.business.id, id);
    expect(url).toMatch(
      new RegExp(
        `^${env().publicBaseUrl}${PUBLIC_MEDIA_PATH}/${t.business.id}/${id}\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`,
      ),
    );
    expect(parts(url).expires - Date.now() / 1000).toBeGreaterThan(MEDIA_URL_TTL_SECONDS - 5);
    const res = await api.get(pathOf(url));
    expect(res.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), PNG)).toBe(0);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get('cache-control')!)![1]);
    expect(maxAge).toBeGreaterThan(MEDIA_URL_TTL_SECONDS - 5);
    expect(maxAge).toBeLessThanOrEqual(MEDIA_URL_TTL_SECONDS);
  });

  it('is a 403 once anything in it is changed, a 410 once expired, a 404 for an upload that does not exist', async () => {
    const id = await upload(t, PNG);
    const other = await upload(t, GIF);
    const url = signedMediaUrl(t.business.id, id);
    const { expires, signature } = parts(url);
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    const route = (b: number, m: number, e: number, s: string) => `${PUBLIC_MEDIA_PATH}/${b}/${m}?expires=${e}&signature=${s}`;
    const forbidden = [
      route(t.business.id, id, expires, flipped),
      route(t.business.id, other, expires, signature), // another upload
      route(t.business.id + 1, id, expires, signature), // another business
      route(t.business.id, id, expires + 3600, signature), // a longer life
    ];
    for (const path of forbidden) {
      const res = await api.get(path);
      expect(res.status, path).toBe(403);
      expect(await jsonOf(res)).toEqual({ detail: 'Invalid media link' });
    }
    // Signed long enough ago to have expired.
    const old = signedMediaUrl(t.business.id, id, Date.now() - (MEDIA_URL_TTL_SECONDS + 1) * 1000);
    const expired = await api.get(pathOf(old));
    expect(expired.status).toBe(410);
    expect(checkMediaLink(parts(old))).toEqual({ ok: false, reason: 'expired' });
    // Signed with another secret: as good as forged.
    const forged = signedMediaUrl(t.business.id, id, Date.now(), { ...env(), mediaUrlSecret: 'another-secret-0123456789' });
    expect((await api.get(pathOf(forged))).status).toBe(403);
    // Well signed, but nothing there (another business's id under this business's name).
    const foreign = await upload(await restTenant());
    expect((await api.get(pathOf(signedMediaUrl(t.business.id, foreign)))).status).toBe(404);
    // Malformed parts are validation errors.
    expect((await api.get(route(t.business.id, id, expires, 'short'))).status).toBe(422);
    expect((await api.get(`${PUBLIC_MEDIA_PATH}/${t.business.id}/${id}`)).status).toBe(422);
  });
});

describe('storage: one copy per content, a quota per business, a day for uploads no message names', () => {
  /** A PNG-signed file of `size` bytes, different for each `tag`. */
  const picture = (tag: string, size = 1000) => {
    const head = Buffer.concat([PNG.subarray(0, 8), Buffer.from(tag)]);
    return Buffer.concat([head, Buffer.alloc(size - head.length, 7)]);
  };
  const stored = async (businessId: number) => {
    const [row] = await db
      .select({ bytes: mediaStorage.storedBytes })
      .from(mediaStorage)
      .where(eq(mediaStorage.businessId, businessId));
    const contents = await db.select().from(mediaContents).where(eq(mediaContents.businessId, businessId));
    // The count is what the contents take, always.
    expect(row?.bytes ?? 0).toBe(contents.reduce((sum, c) => sum + c.sizeBytes, 0));
    return { bytes: row?.bytes ?? 0, contents: contents.length, uploads: await uploadCount(businessId) };
  };
  const signedBytes = async (businessId: number, mediaId: number) => {
    const u = new URL(signedMediaUrl(businessId, mediaId));
    return Buffer.from(await (await api.get(`${u.pathname}${u.search}`)).arrayBuffer());
  };

  it('stores the same bytes once per business; a repeated upload still gets its own media_id; another business keeps its own copy', async () => {
    const u = await restTenant();
    const file = picture('same');
    const first = await jsonOf(await uploadRaw(u, file, 'image/png'));
    const again = await jsonOf(await uploadForm(u, { bytes: file, contentType: 'image/png', filename: 'again.png' }));
    expect(again.media_id).not.toBe(first.media_id);
    expect(again).toMatchObject({ sha256: first.sha256, size: file.length, filename: 'again.png' });
    expect(await stored(u.business.id)).toEqual({ bytes: file.length, contents: 1, uploads: 2 });
    expect(await signedBytes(u.business.id, first.media_id)).toEqual(file);
    expect(await signedBytes(u.business.id, again.media_id)).toEqual(file);

    const other = await restTenant();
    await upload(other, file);
    expect(await stored(other.business.id)).toEqual({ bytes: file.length, contents: 1, uploads: 1 });
    expect((await stored(u.business.id)).contents).toBe(1);
  });

  it('stores the bytes once when the same file is uploaded eight times at once, each upload with its own media_id', async () => {
    const u = await restTenant();
    // Not its first upload: the business's storage row exists, so only its lock can order them.
    const earlier = picture('earlier');
    await upload(u, earlier);
    const file = picture('concurrent', 1_000_000);
    const answers = await Promise.all(Array.from({ length: 8 }, () => uploadRaw(u, file, 'image/png')));
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    const ids = await Promise.all(answers.map(async (r) => (await jsonOf(r)).media_id as number));
    expect(new Set(ids).size).toBe(8);
    expect(await stored(u.business.id)).toEqual({ bytes: earlier.length + file.length, contents: 2, uploads: 9 });
  });

  it('answers 507 naming MEDIA_STORAGE_QUOTA_BYTES past the quota and stores nothing; bytes already stored still upload; 413 stays for a file too large', async () => {
    const u = await restTenant();
    quota.bytes = 3000;
    for (const tag of ['a', 'b', 'c']) await upload(u, picture(tag));
    const before = await stored(u.business.id);
    expect(before).toEqual({ bytes: 3000, contents: 3, uploads: 3 });

    const over = await uploadRaw(u, picture('d'), 'image/png');
    expect(over.status).toBe(507);
    const { detail } = await jsonOf(over);
    expect(detail).toMatch(/MEDIA_STORAGE_QUOTA_BYTES/);
    expect(detail).toMatch(/3,000 of the 3,000 bytes/);
    expect(await stored(u.business.id)).toEqual(before);

    // The same bytes again take no room: accepted, with a media_id of their own.
    expect((await uploadRaw(u, picture('a'), 'image/png')).status).toBe(200);
    // One file over 5,000,000 bytes is a 413 whatever the quota says.
    const huge = await uploadRaw(u, Buffer.concat([PNG, Buffer.alloc(MMS_MAX_BYTES)]), 'image/png');
    expect(huge.status).toBe(413);
    expect((await jsonOf(huge)).detail).toMatch(/over 5,000,000 bytes/);
    // Another business has its own quota.
    expect((await uploadRaw(await restTenant(), picture('d'), 'image/png')).status).toBe(200);
  });

  it('holds the quota when uploads race: of six new files at once with room for two, exactly two are stored', async () => {
    const u = await restTenant();
    quota.bytes = 3000;
    await upload(u, picture('first')); // the storage row exists: only its lock orders the six
    const answers = await Promise.all(['1', '2', '3', '4', '5', '6'].map((tag) => uploadRaw(u, picture(tag), 'image/png')));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 507, 507, 507, 507]);
    expect(await stored(u.business.id)).toEqual({ bytes: 3000, contents: 3, uploads: 3 });
  });

  it('deletes uploads no message named once a day old, and the contents no upload refers to any more; nothing else', async () => {
    const u = await restTenant();
    await createSmsNumber(u.business.id);
    const backdate = (ids: number[]) =>
      db
        .update(mediaUploads)
        .set({ createdAt: sql`now() - interval '25 hours'` })
        .where(and(eq(mediaUploads.businessId, u.business.id), inArray(mediaUploads.id, ids)));
    const [lone, shared, sent, fresh, sharedFresh] = [
      picture('lone'),
      picture('shared'),
      picture('sent'),
      picture('fresh'),
      picture('shared'),
    ];
    const loneId = await upload(u, lone);
    const sharedId = await upload(u, shared);
    const sentId = await upload(u, sent);
    const freshId = await upload(u, fresh);
    const sharedFreshId = await upload(u, sharedFresh);
    const send = await api.post(`${u.base}/sms`, {
      headers: u.key,
      body: { sender_type: 'staff', messages: [{ to_number: '+14155552671', message: 'Your colour', media_ids: [sentId] }] },
    });
    expect(send.status, await send.clone().text()).toBe(200);
    const [messageId] = (await jsonOf(send)).message_ids as number[];
    await backdate([loneId, sharedId, sentId]);
    // Another business's old upload of the same bytes is its own, and goes by its own age.
    const other = await restTenant();
    const otherId = await upload(other, lone);

    // Not yet a day past the backdated ones' upload: nothing goes.
    expect(await deleteUnattachedUploads(new Date(Date.now() - 2 * 3600 * 1000))).toEqual({ uploads: 0, contents: 0, bytes: 0 });
    const swept = await runMaintenance();
    expect(swept.uploads).toEqual({ uploads: 2, contents: 1, bytes: lone.length });
    const left = await db.select({ id: mediaUploads.id }).from(mediaUploads).where(eq(mediaUploads.businessId, u.business.id));
    expect(left.map((r) => r.id).sort((a, b) => a - b)).toEqual([sentId, freshId, sharedFreshId]);
    expect(await stored(u.business.id)).toEqual({ bytes: shared.length + sent.length + fresh.length, contents: 3, uploads: 3 });
    expect(await stored(other.business.id)).toEqual({ bytes: lone.length, contents: 1, uploads: 1 });
    expect(await signedBytes(other.business.id, otherId)).toEqual(lone);

    // The sent picture is still the message's; the deleted ones are gone for good.
    const media = await api.get(`${u.base}/messages/${messageId}/media/0`, { headers: u.key });
    expect(media.status).toBe(200);
    expect(Buffer.from(await media.arrayBuffer())).toEqual(sent);
    const late = await api.post(`${u.base}/sms`, {
      headers: u.key,
      body: { sender_type: 'staff', messages: [{ to_number: '+14155552671', message: 'Late', media_ids: [loneId] }] },
    });
    expect(late.status).toBe(422);
    expect(locs(await jsonOf(late))).toEqual([['body', 'messages', 0, 'media_ids', 0]]);
    // A day after the fresh ones, they go too (the sent one never does).
    // (Every business's: this file's other uploads go as well.)
    await deleteUnattachedUploads(new Date(Date.now() + UNATTACHED_UPLOAD_TTL_MS + 60_000));
    expect(await stored(u.business.id)).toEqual({ bytes: sent.length, contents: 1, uploads: 1 });
  });

  it('marks an upload attached with the message that names it; one the cleanup deleted meanwhile is a 422 at its place', async () => {
    const u = await restTenant();
    await createSmsNumber(u.business.id);
    const id = await upload(u, picture('attach'));
    const [before] = await db.select().from(mediaUploads).where(eq(mediaUploads.id, id));
    expect(before!.attachedAt).toBeNull();
    const send = await api.post(`${u.base}/sms`, {
      headers: u.key,
      body: { sender_type: 'staff', messages: [{ to_number: '+14155552672', message: 'Attached', media_ids: [id] }] },
    });
    expect(send.status).toBe(200);
    const [after] = await db.select().from(mediaUploads).where(eq(mediaUploads.id, id));
    expect(after!.attachedAt).toBeInstanceOf(Date);

    // The request was checked, then the cleanup deleted the upload before the messages were written.
    const gone = await upload(u, picture('gone'));
    await db.delete(mediaUploads).where(eq(mediaUploads.id, gone));
    const attachment = (mediaId: number) => ({
      filename: 'p.png',
      content_type: 'image/png',
      url: null,
      size: 1000,
      media_id: mediaId,
    });
    const mms = new Map([
      [0, [attachment(id)]],
      [
        3,
        [
          { filename: 'media-0', content_type: null, url: 'https://cdn.example/a.png', size: null },
          attachment(id),
          attachment(gone),
        ],
      ],
    ]);
    await expect(db.transaction((tx) => attachUploads(u.business.id, mms, tx))).rejects.toMatchObject({
      code: 'validation',
      extra: { issues: [{ loc: ['body', 'messages', 3, 'media_ids', 1], msg: `Media ${gone} not found in this business` }] },
    });
  });
});
