import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/db/client';
import { messages, type StoredAttachment } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { api, jsonOf, locs, restTenant, type RestTenant } from '@/server/testing/http';
import { fetchTwilioMedia, isTwilioMediaUrl, MEDIA_MAX_BYTES, mediaDisposition } from './media';

/**
 * MMS media through GET /businesses/{id}/messages/{id}/media/{index} (docs/api.md#mms): tenancy,
 * the Twilio-only allow-list, the size cap, the type rules and the credentials sent to the fake.
 */

// The route reads Twilio's settings from env(): pointed at the fake once it listens.
const twilioEnv = vi.hoisted(() => ({ current: null as null | { accountSid: string; authToken: string; apiBaseUrl: string } }));
vi.mock('@/server/env', async (importOriginal) => {
  const mod = await importOriginal<typeof import('@/server/env')>();
  return {
    ...mod,
    env: () => {
      const e = mod.env();
      return twilioEnv.current ? { ...e, twilio: { ...e.twilio, ...twilioEnv.current } } : e;
    },
  };
});

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

let fake: FakeTwilio;
let t: RestTenant;

beforeAll(async () => {
  fake = await startFakeTwilio();
  twilioEnv.current = { accountSid: fake.accountSid, authToken: fake.authToken, apiBaseUrl: fake.url };
  t = await restTenant();
});
afterAll(async () => {
  twilioEnv.current = null;
  await fake.close();
});

async function inboundMms(tenant: RestTenant, media: StoredAttachment[]) {
  const client = await createClient(tenant.business.id);
  const conv = await createConversation(tenant.business.id, client.id);
  return createMessage(conv, {
    direction: 'inbound',
    senderType: 'client',
    status: 'received',
    provider: 'twilio',
    attachments: media,
  });
}

const attachment = (url: string, contentType = 'image/png'): StoredAttachment => ({
  filename: 'media-0',
  content_type: contentType,
  url,
  size: null,
});

const mediaPath = (tenant: RestTenant, messageId: number, index = 0) => `${tenant.base}/messages/${messageId}/media/${index}`;

describe('MMS media route', () => {
  it('answers the picture with our credentials sent to Twilio, following its redirect, with safe headers', async () => {
    const url = fake.addMedia(PNG, 'image/png');
    const m = await inboundMms(t, [attachment(url)]);
    const before = fake.mediaRequests.length;
    for (const headers of [t.key, t.session]) {
      const res = await api.get(mediaPath(t, m.id), { headers });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer())).toEqual(PNG);
      expect(res.headers.get('content-type')).toBe('image/png');
      expect(res.headers.get('content-disposition')).toBe('inline; filename="media-0.png"');
      expect(res.headers.get('cache-control')).toMatch(/^private/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
    const seen = fake.mediaRequests.slice(before);
    // The API URL with Basic auth, then the storage it redirects to.
    expect(seen.map((r) => [r.path.split('/')[1], r.authenticated])).toEqual([
      ['2010-04-01', true],
      ['media-store', true],
      ['2010-04-01', true],
      ['media-store', true],
    ]);
  });

  it("is a 404 for another business's message, a missing index or no credentials' business", async () => {
    const m = await inboundMms(t, [attachment(fake.addMedia(PNG, 'image/png'))]);
    const other = await restTenant();
    const before = fake.mediaRequests.length;
    expect((await api.get(`${other.base}/messages/${m.id}/media/0`, { headers: other.key })).status).toBe(404);
    expect((await api.get(mediaPath(t, m.id, 1), { headers: t.key })).status).toBe(404);
    expect((await api.get(mediaPath(t, m.id, 10), { headers: t.key })).status).toBe(422);
    expect((await api.get(mediaPath(other, m.id), { headers: t.key })).status).toBe(403);
    expect((await api.get(mediaPath(t, m.id))).status).toBe(401);
    expect((await api.get(`${t.base}/messages/${m.id}/media/x`, { headers: t.key })).status).toBe(422);
    // Nothing was fetched for any of them.
    expect(fake.mediaRequests.length).toBe(before);
  });

  it('never fetches a URL that is not Twilio media of our account', async () => {
    const foreignAccount = fake.addMedia(PNG, 'image/png').replace(fake.accountSid, `AC${'1'.repeat(32)}`);
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'https://example.com/2010-04-01/Accounts/AC00000000000000000000000000000000/Messages/MM00000000000000000000000000000000/Media/ME00000000000000000000000000000000',
      `${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Messages.json`,
      foreignAccount,
      `${fake.addMedia(PNG, 'image/png')}?x=1`,
    ];
    const before = fake.mediaRequests.length;
    for (const url of urls) {
      expect(isTwilioMediaUrl(url, twilioEnv.current!)).toBe(false);
      const m = await inboundMms(t, [attachment(url)]);
      const res = await api.get(mediaPath(t, m.id), { headers: t.key });
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({ detail: 'Media not available' });
    }
    expect(fake.mediaRequests.length).toBe(before);
    expect(isTwilioMediaUrl(fake.addMedia(PNG, 'image/png'), twilioEnv.current!)).toBe(true);
    expect(
      isTwilioMediaUrl(
        `https://api.twilio.com/2010-04-01/Accounts/${fake.accountSid}/Messages/MM${'a'.repeat(32)}/Media/ME${'b'.repeat(32)}`,
        twilioEnv.current!,
      ),
    ).toBe(true);
  });

  it('cuts off media over 5 MiB, refuses types it does not serve, and downloads the others', async () => {
    const big = await inboundMms(t, [attachment(fake.addMedia(Buffer.alloc(MEDIA_MAX_BYTES + 1), 'image/jpeg'))]);
    const res = await api.get(mediaPath(t, big.id), { headers: t.key });
    expect(res.status).toBe(502);
    expect(await jsonOf(res)).toEqual({ detail: 'Media could not be fetched' });

    for (const type of ['text/html', 'image/svg+xml', 'application/javascript', 'application/octet-stream']) {
      const m = await inboundMms(t, [attachment(fake.addMedia(Buffer.from('<script>alert(1)</script>'), type), type)]);
      const refused = await api.get(mediaPath(t, m.id), { headers: t.key });
      expect(refused.status, type).toBe(415);
    }

    const pdf = await inboundMms(t, [attachment(fake.addMedia(Buffer.from('%PDF-1.4'), 'application/pdf'), 'application/pdf')]);
    const download = await api.get(mediaPath(t, pdf.id), { headers: t.key });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="media-0.pdf"');

    // Twilio's answer decides, not the stored type: a "picture" that is HTML is not served.
    const lying = await inboundMms(t, [attachment(fake.addMedia(Buffer.from('<html>'), 'text/html'), 'image/png')]);
    expect((await api.get(mediaPath(t, lying.id), { headers: t.key })).status).toBe(415);
  });

  it('is a 502 when Twilio refuses (wrong credentials, gone media)', async () => {
    const url = fake.addMedia(PNG, 'image/png');
    const m = await inboundMms(t, [attachment(url)]);
    twilioEnv.current = { ...twilioEnv.current!, authToken: 'wrong' };
    try {
      expect((await api.get(mediaPath(t, m.id), { headers: t.key })).status).toBe(502);
    } finally {
      twilioEnv.current = { ...twilioEnv.current, authToken: fake.authToken };
    }
    const gone = await inboundMms(t, [attachment(url.replace(/ME[0-9a-f]{32}$/, `ME${'0'.repeat(32)}`))]);
    expect((await api.get(mediaPath(t, gone.id), { headers: t.key })).status).toBe(502);
  });

  it('is a 502, not a 500, when Twilio stalls halfway through the body', async () => {
    const stalling = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 1000 });
      res.write(Buffer.alloc(10)); // then nothing
    });
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(stalling.address() as AddressInfo).port}`;
    const url = `${base}/2010-04-01/Accounts/${fake.accountSid}/Messages/MM${'a'.repeat(32)}/Media/ME${'b'.repeat(32)}`;
    try {
      await expect(fetchTwilioMedia(url, { ...twilioEnv.current!, apiBaseUrl: base }, 300)).rejects.toMatchObject({
        name: 'MediaUnavailable',
        status: 502,
      });
    } finally {
      stalling.closeAllConnections();
      stalling.close();
    }
  });

  it('classifies types: raster images inline, listed files as downloads, the rest not at all', () => {
    expect(mediaDisposition('image/JPEG; charset=binary')).toBe('inline');
    expect(mediaDisposition('image/heic')).toBe('attachment');
    expect(mediaDisposition('text/vcard')).toBe('attachment');
    expect(mediaDisposition('image/svg+xml')).toBeNull();
    expect(mediaDisposition(null)).toBeNull();
  });
});

describe('media_urls on POST /businesses/{id}/sms', () => {
  const send = (tenant: RestTenant, item: Record<string, unknown>) =>
    api.post(`${tenant.base}/sms`, {
      headers: tenant.key,
      body: { sender_type: 'staff', messages: [{ to_number: '+14155550123', message: 'Photo attached', ...item }] },
    });

  it('is a 422 naming the URL for a bad or non-https URL, over 10 URLs, an empty list or an overlong URL', async () => {
    const cases: [unknown, unknown[]][] = [
      [['not a url'], ['body', 'messages', 0, 'media_urls', 0]],
      [
        ['https://ok.example/a.png', 'http://example.com/a.png'],
        ['body', 'messages', 0, 'media_urls', 1],
      ],
      [['javascript:alert(1)'], ['body', 'messages', 0, 'media_urls', 0]],
      [Array.from({ length: 11 }, (_, i) => `https://example.com/${i}.png`), ['body', 'messages', 0, 'media_urls']],
      [[], ['body', 'messages', 0, 'media_urls']],
      [[`https://example.com/${'a'.repeat(2048)}`], ['body', 'messages', 0, 'media_urls', 0]],
      ['https://example.com/a.png', ['body', 'messages', 0, 'media_urls']],
    ];
    for (const [media_urls, loc] of cases) {
      const res = await send(t, { media_urls });
      expect(res.status, JSON.stringify(media_urls).slice(0, 80)).toBe(422);
      expect(locs(await jsonOf(res))).toContainEqual(loc);
    }
  });

  it('accepts up to 10 https URLs and stores them as the attachments of the queued message', async () => {
    await createSmsNumber(t.business.id);
    const urls = Array.from({ length: 10 }, (_, i) => `https://cdn.example.com/p/${i}.jpg`);
    const res = await send(t, { media_urls: urls });
    expect(res.status, await res.clone().text()).toBe(200);
    const [id] = (await jsonOf(res)).message_ids as number[];
    const [row] = await db.select().from(messages).where(eq(messages.id, id!));
    expect(row!.attachments!.map((a) => a.url)).toEqual(urls);
  });
});
