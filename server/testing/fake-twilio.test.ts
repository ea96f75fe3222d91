import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countSegments, startFakeTwilio, twilioTestNumberBehavior, type FakeTwilio } from './fake-twilio';

let fake: FakeTwilio;
let auth: string;
let base: string;

beforeAll(async () => {
  fake = await startFakeTwilio({ accountSid: 'AC00000000000000000000000000000001', authToken: 'secret-token' });
  auth = `Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`;
  base = `${fake.url}/2010-04-01/Accounts/${fake.accountSid}/Messages`;
});

afterAll(async () => {
  await fake.close();
});

function create(params: Record<string, string | string[]>, headers: Record<string, string> = { authorization: auth }) {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) form.append(k, one);
  return fetch(`${base}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: form.toString(),
  });
}

describe('fake twilio', () => {
  it('uses the given credentials and rejects others with 401 / 20003', async () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await create({ To: '+14155550100', From: '+15005550006', Body: 'hi' }, { authorization: 'Basic eDp5' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 20003, status: 401, more_info: 'https://www.twilio.com/docs/errors/20003' });
    const none = await fetch(`${base}.json`);
    expect(none.status).toBe(401);
  });

  it('creates messages with Twilio-shaped JSON and fetches them by SID', async () => {
    const res = await create({
      To: '+14155550100',
      From: '+15005550006',
      Body: 'hello',
      StatusCallback: 'https://example.com/cb',
      MediaUrl: ['https://x/1.jpg', 'https://x/2.jpg'],
    });
    expect(res.status).toBe(201);
    const json = (await res.json()) as Record<string, unknown>;
    expect(json).toMatchObject({
      account_sid: fake.accountSid,
      to: '+14155550100',
      from: '+15005550006',
      body: 'hello',
      status: 'queued',
      num_segments: '1',
      num_media: '2',
      error_code: null,
      error_message: null,
      api_version: '2010-04-01',
      direction: 'outbound-api',
      price: null,
      messaging_service_sid: null,
      subresource_uris: {},
    });
    expect(json.sid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(json.date_created).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(json.uri).toBe(`/2010-04-01/Accounts/${fake.accountSid}/Messages/${String(json.sid)}.json`);
    expect(fake.messages.at(-1)).toMatchObject({
      mediaUrls: ['https://x/1.jpg', 'https://x/2.jpg'],
      statusCallback: 'https://example.com/cb',
    });

    const fetched = await fetch(`${base}/${String(json.sid)}.json`, { headers: { authorization: auth } });
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toMatchObject({ sid: json.sid, body: 'hello' });
    const missing = await fetch(`${base}/SM${'0'.repeat(32)}.json`, { headers: { authorization: auth } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 20404, status: 404 });
  });

  it('validates required params like Twilio', async () => {
    expect(await (await create({ From: '+15005550006', Body: 'x' })).json()).toMatchObject({ code: 21604, status: 400 });
    expect(await (await create({ To: '+14155550100', Body: 'x' })).json()).toMatchObject({ code: 21603, status: 400 });
    expect(await (await create({ To: '+14155550100', From: '+15005550006' })).json()).toMatchObject({ code: 21602, status: 400 });
    const viaService = await create({ To: '+14155550100', MessagingServiceSid: 'MG00000000000000000000000000000001', Body: 'x' });
    expect(await viaService.json()).toMatchObject({ status: 'accepted', num_segments: '0', from: null });
  });

  it('failNext, behaviors and test numbers', async () => {
    fake.failNext(2, { status: 503 });
    expect((await create({ To: '+14155550100', From: '+15005550006', Body: 'x' })).status).toBe(503);
    expect(await (await create({ To: '+14155550100', From: '+15005550006', Body: 'x' })).json()).toMatchObject({
      code: 20500,
      status: 503,
    });
    expect((await create({ To: '+14155550100', From: '+15005550006', Body: 'x' })).status).toBe(201);

    fake.setBehavior(twilioTestNumberBehavior);
    expect(await (await create({ To: '+15005550004', From: '+15005550006', Body: 'x' })).json()).toMatchObject({ code: 21610 });
    expect(await (await create({ To: '+14155550100', From: '+15005550007', Body: 'x' })).json()).toMatchObject({ code: 21606 });
    expect((await create({ To: '+14155550100', From: '+15005550006', Body: 'x' })).status).toBe(201);
    fake.setBehavior(null);
  });

  it('lists newest first with To/From/DateSent filters and pages', async () => {
    const to = '+14155550777';
    for (let i = 0; i < 5; i++) await create({ To: to, From: '+15005550006', Body: `m${i}` });
    const today = new Date().toISOString().slice(0, 10);
    const list = async (q: string) => {
      const res = await fetch(`${base}.json?${q}`, { headers: { authorization: auth } });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        messages: Array<{ body: string }>;
        next_page_uri: string | null;
        page_size: number;
        page: number;
      };
    };
    const first = await list(new URLSearchParams({ To: to, PageSize: '3', 'DateSent>': `${today}T00:00:00Z` }).toString());
    expect(first.messages.map((m) => m.body)).toEqual(['m4', 'm3', 'm2']);
    expect(first.page_size).toBe(3);
    expect(first.next_page_uri).toContain('Page=1');
    const second = await list(first.next_page_uri!.split('?')[1]!);
    expect(second.messages.map((m) => m.body)).toEqual(['m1', 'm0']);
    expect(second.next_page_uri).toBeNull();

    expect((await list(new URLSearchParams({ To: to, 'DateSent>': '2999-01-01' }).toString())).messages).toEqual([]);
    expect((await list(new URLSearchParams({ To: to, 'DateSent<': '2000-01-01' }).toString())).messages).toEqual([]);
    expect((await list(new URLSearchParams({ To: to, DateSent: today }).toString())).messages).toHaveLength(5);
    expect((await list(new URLSearchParams({ To: to, From: '+15005550099' }).toString())).messages).toEqual([]);
  });

  it('counts segments like Twilio', () => {
    expect(countSegments('a'.repeat(160))).toBe(1);
    expect(countSegments('a'.repeat(161))).toBe(2);
    expect(countSegments('€'.repeat(80))).toBe(1);
    expect(countSegments('ç')).toBe(1);
    expect(countSegments('x'.repeat(70) + '😀')).toBe(2);
  });
});
