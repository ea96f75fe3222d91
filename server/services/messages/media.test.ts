import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { messages, type StoredAttachment } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { startHttpsServer, TEST_TLS } from '@/server/testing/tls';
import { inboundSmsForm, postTwilio, TWILIO_PATHS, twilioSid } from '@/server/testing/webhooks';
import { api, jsonOf, locs, restTenant, type RestTenant } from '@/server/testing/http';
import { mediaDisposition } from '@/server/shared/media-types';
import { fetchTwilioMedia, MEDIA_MAX_BYTES, twilioMediaMessageSid } from './media';

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

/** The message sid a Twilio media URL names (`…/Messages/{sid}/Media/…`). */
const sidOf = (url: string) => /\/Messages\/([A-Za-z0-9]{34})\/Media\//.exec(url)?.[1];

/** An inbound MMS as Twilio delivers it: its sid is the one its media URLs name. */
async function inboundMms(tenant: RestTenant, media: StoredAttachment[], sid = sidOf(media[0]?.url ?? '')) {
  const client = await createClient(tenant.business.id);
  const conv = await createConversation(tenant.business.id, client.id);
  return createMessage(conv, {
    direction: 'inbound',
    senderType: 'client',
    status: 'received',
    provider: 'twilio',
    ...(sid ? { providerMessageId: sid } : {}),
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
      expect(twilioMediaMessageSid(url, twilioEnv.current!)).toBeNull();
      const m = await inboundMms(t, [attachment(url)]);
      const res = await api.get(mediaPath(t, m.id), { headers: t.key });
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({ detail: 'Media not available' });
    }
    expect(fake.mediaRequests.length).toBe(before);
    expect(twilioMediaMessageSid(fake.addMedia(PNG, 'image/png'), twilioEnv.current!)).toMatch(/^MM/);
    expect(
      twilioMediaMessageSid(
        `https://api.twilio.com/2010-04-01/Accounts/${fake.accountSid}/Messages/MM${'a'.repeat(32)}/Media/ME${'b'.repeat(32)}`,
        twilioEnv.current!,
      ),
    ).toBe(`MM${'a'.repeat(32)}`);
  });

  it("answers 404 for another tenant's MMS URL recorded as an email attachment, and nothing reaches Twilio", async () => {
    // The victim receives an MMS through the real webhook, signed as Twilio signs it.
    const victim = await restTenant();
    const number = await createSmsNumber(victim.business.id);
    const url = fake.addMedia(PNG, 'image/png');
    const sid = sidOf(url)!;
    const form = inboundSmsForm(number.phoneNumber, '+14155550142', 'the floor plan', {
      MessageSid: sid,
      NumMedia: '1',
      MediaUrl0: url,
      MediaContentType0: 'image/png',
    });
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, form, { token: fake.authToken })).status).toBe(200);
    const [own] = await db
      .select({ id: messages.id })
      .from(messages)
      .where(and(eq(messages.businessId, victim.business.id), eq(messages.providerMessageId, sid)));

    // Another tenant records an email whose attachment is that URL, even claiming the same sid.
    const attacker = await restTenant();
    const client = await createClient(attacker.business.id);
    const recorded = await api.post(`${attacker.base}/email/record`, {
      headers: attacker.key,
      body: {
        sender_type: 'staff',
        messages: [
          {
            client_id: client.id,
            subject: 'Fwd',
            message: 'see attached',
            direction: 'inbound',
            provider_message_id: sid,
            attachments: [{ filename: 'plan.png', url }],
          },
        ],
      },
    });
    expect(recorded.status, await recorded.clone().text()).toBe(200);
    const [planted] = (await jsonOf(recorded)).message_ids as number[];
    const before = fake.mediaRequests.length;
    const res = await api.get(mediaPath(attacker, planted!), { headers: attacker.key });
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ detail: 'Media not available' });
    expect(fake.mediaRequests.length).toBe(before);

    // The victim still sees its own picture.
    const mine = await api.get(mediaPath(victim, own!.id), { headers: victim.key });
    expect(mine.status).toBe(200);
    expect(Buffer.from(await mine.arrayBuffer())).toEqual(PNG);
  });

  it('answers 404 for Twilio media on any message but the inbound Twilio SMS whose sid the URL names', async () => {
    const url = fake.addMedia(PNG, 'image/png');
    const sid = sidOf(url)!;
    const planted: [RestTenant, number][] = [];
    // An inbound MMS whose URL names another message.
    planted.push([t, (await inboundMms(t, [attachment(url)], twilioSid('MM'))).id]);
    // An outbound text carrying the URL, even under that sid.
    const other = await restTenant();
    const conv = await createConversation(other.business.id, (await createClient(other.business.id)).id);
    planted.push([
      other,
      (await createMessage(conv, { provider: 'twilio', providerMessageId: sid, attachments: [attachment(url)] })).id,
    ]);
    // An inbound email, and an inbound SMS of another provider, under that sid.
    const third = await restTenant();
    const conv3 = await createConversation(third.business.id, (await createClient(third.business.id)).id);
    const inbound = { direction: 'inbound', senderType: 'client', status: 'received' } as const;
    planted.push([
      third,
      (
        await createMessage(conv3, {
          ...inbound,
          channel: 'email',
          messageType: 'EMAIL',
          provider: 'twilio',
          providerMessageId: sid,
        })
      ).id,
    ]);
    planted.push([
      third,
      (await createMessage(conv3, { ...inbound, attachments: [attachment(url)], provider: 'sandbox', providerMessageId: sid }))
        .id,
    ]);

    const before = fake.mediaRequests.length;
    for (const [tenant, id] of planted) {
      const res = await api.get(mediaPath(tenant, id), { headers: tenant.key });
      expect(res.status, `message ${id}`).toBe(404);
    }
    expect(fake.mediaRequests.length).toBe(before);
    // The message the URL names is served.
    const owner = await restTenant();
    const own = await inboundMms(owner, [attachment(url)]);
    expect(own.providerMessageId).toBe(sid);
    expect((await api.get(mediaPath(owner, own.id), { headers: owner.key })).status).toBe(200);
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
    // Media Twilio no longer has, on a message of its own.
    const gone = await inboundMms(t, [
      attachment(url.replace(/MM[0-9a-f]{32}/, twilioSid('MM')).replace(/ME[0-9a-f]{32}$/, `ME${'0'.repeat(32)}`)),
    ]);
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
      await expect(fetchTwilioMedia(url, { ...twilioEnv.current!, apiBaseUrl: base }, { timeoutMs: 300 })).rejects.toMatchObject({
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

describe('fetchTwilioMedia: redirects https only, one deadline for the whole fetch', () => {
  const ACCOUNT = `AC${'c'.repeat(32)}`;
  const mediaPathOn = (origin: string) =>
    `${origin}/2010-04-01/Accounts/${ACCOUNT}/Messages/MM${'a'.repeat(32)}/Media/ME${'b'.repeat(32)}`;
  // Twilio's storage in these tests: an https host on 127.0.0.1 with the test certificate.
  const elsewhere = { isAllowedAddress: (a: string) => a === '127.0.0.1', ca: TEST_TLS.cert };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const servers: { close: () => Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  /** A plain http server on 127.0.0.1 (the configured API base, or a host that must never be reached); every request it got. */
  async function httpServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>) {
    const hits: { path: string; authorization?: string }[] = [];
    const server = http.createServer((req, res) => {
      hits.push({ path: req.url!, authorization: req.headers.authorization });
      void handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const s = {
      origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      hits,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
    servers.push(s);
    return s;
  }
  async function httpsServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>) {
    const hits: { path: string; authorization?: string }[] = [];
    const s = await startHttpsServer((req, res) => {
      hits.push({ path: req.url!, authorization: req.headers.authorization });
      void handler(req, res);
    });
    servers.push(s);
    return { ...s, hits };
  }
  const redirect = (res: http.ServerResponse, location: string) => {
    res.writeHead(302, { Location: location, 'Content-Length': 0 });
    res.end();
  };
  const picture = (res: http.ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': PNG.length });
    res.end(PNG);
  };
  const sourceAt = (origin: string) => ({ accountSid: ACCOUNT, authToken: 'token', apiBaseUrl: origin });

  it("follows Twilio's https redirect to its storage, without our credentials", async () => {
    const storage = await httpsServer((_req, res) => picture(res));
    const twilioApi = await httpServer((_req, res) => redirect(res, `${storage.origin}/store/1`));
    const media = await fetchTwilioMedia(mediaPathOn(twilioApi.origin), sourceAt(twilioApi.origin), { elsewhere });
    expect(media.bytes).toEqual(PNG);
    expect(twilioApi.hits[0]!.authorization).toMatch(/^Basic /);
    expect(storage.hits).toEqual([{ path: '/store/1', authorization: undefined }]);
  });

  it('refuses a redirect down to http, from Twilio or from its storage: the http host never hears from us', async () => {
    const sink = await httpServer((_req, res) => picture(res));
    const storage = await httpsServer((_req, res) => redirect(res, `${sink.origin}/stolen`));
    const direct = await httpServer((_req, res) => redirect(res, `${sink.origin}/stolen`));
    const viaStorage = await httpServer((_req, res) => redirect(res, `${storage.origin}/store/1`));
    for (const twilioApi of [direct, viaStorage]) {
      await expect(
        fetchTwilioMedia(mediaPathOn(twilioApi.origin), sourceAt(twilioApi.origin), { elsewhere }),
      ).rejects.toMatchObject({ name: 'MediaUnavailable', status: 502 });
    }
    expect(storage.hits).toHaveLength(1);
    expect(sink.hits).toEqual([]);
  });

  it('cuts a slow chain of redirects at one deadline for the whole fetch, not a fresh timeout per hop', async () => {
    // Each hop takes 400 ms: Twilio's, then two at its storage. 1 s suffices for Twilio's hop alone and
    // for the storage's two, but not for all three.
    const storage = await httpsServer(async (req, res) => {
      await sleep(400);
      if (req.url === '/hop/1') redirect(res, '/hop/2');
      else picture(res);
    });
    const twilioApi = await httpServer(async (_req, res) => {
      await sleep(400);
      redirect(res, `${storage.origin}/hop/1`);
    });
    const url = mediaPathOn(twilioApi.origin);
    const started = Date.now();
    await expect(fetchTwilioMedia(url, sourceAt(twilioApi.origin), { elsewhere, timeoutMs: 1000 })).rejects.toMatchObject({
      name: 'MediaUnavailable',
      status: 502,
    });
    expect(Date.now() - started).toBeLessThan(1200);
    // Given the time, the same chain answers.
    expect((await fetchTwilioMedia(url, sourceAt(twilioApi.origin), { elsewhere, timeoutMs: 3000 })).bytes).toEqual(PNG);
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
