import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { createClient, createConversation, createSmsNumber, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf, postJson, restTenant } from '@/server/testing/http';

/**
 * The regression set of the hostile-input issue, REST side: each value below once answered 500
 * or was accepted. Each is now a 422 naming its field (or a 404 for an id in the path), fast, and
 * leaves nothing behind.
 */
const locs = (body: { detail: { loc: unknown[] }[] }) => body.detail.map((d) => d.loc);
const TOO_BIG_ID = 2_147_483_648; // one past PostgreSQL integer

async function messageCount(businessId: number) {
  const [row] = await db.select({ n: count() }).from(messages).where(eq(messages.businessId, businessId));
  return row!.n;
}

describe('ids past PostgreSQL integer', () => {
  it('in a body: 422 naming the field (conversations, assign, auth token)', async () => {
    const t = await restTenant();
    const created = await postJson(`${t.base}/conversations`, t.key, { client_id: TOO_BIG_ID });
    expect(created.status).toBe(422);
    expect(locs(created.body)).toEqual([['body', 'client_id']]);

    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const assigned = await postJson(`${t.base}/conversations/${conversation.id}/assign`, t.key, { staff_id: TOO_BIG_ID });
    expect(assigned.status).toBe(422);
    expect(locs(assigned.body)).toEqual([['body', 'staff_id']]);

    const token = await postJson(
      '/api/v1/auth/token',
      { 'x-api-key': PLATFORM_KEY() },
      { business_id: t.business.id, staff_id: TOO_BIG_ID },
    );
    expect(token.status).toBe(422);
    expect(locs(token.body)).toEqual([['body', 'staff_id']]);
  });

  it('in a query: 422; in a path: 404 like any unknown id', async () => {
    const t = await restTenant();
    const listed = await api.get(`${t.base}/conversations?staff_id=${TOO_BIG_ID}`, { headers: t.key });
    expect(listed.status).toBe(422);
    expect(locs(await jsonOf(listed))).toEqual([['query', 'staff_id']]);
    for (const bad of [TOO_BIG_ID, '99999999999999999999']) {
      const res = await api.get(`${t.base}/conversations/${bad}/messages`, { headers: t.key });
      expect(res.status, String(bad)).toBe(404);
    }
  });
});

/**
 * Issue 32 (contract): `GET /businesses/-4/conversations` answered 404, and every id in a JSON body
 * was coerced (`true` → 1, `[3]` → 3), so `client_id: true` addressed client 1 and an email record
 * with `message_id: true` answered 200. A path or query id is a positive integer in plain digits, a
 * body id a JSON integer; anything else is a 422 naming it.
 */
describe('ids are positive integers, never coerced', () => {
  // 01: one spelling per id (docs/api.md#conventions).
  const NOT_POSITIVE_INTEGERS = ['-4', '0', '1.5', 'abc', '1e3', '+1', '01', ' 1', '0x10'];

  it.each(NOT_POSITIVE_INTEGERS)('a path id of %j is a 422 naming it, before tenancy', async (bad) => {
    const t = await restTenant();
    const business = await api.get(`/api/v1/businesses/${encodeURIComponent(bad)}/conversations`, { headers: t.key });
    expect(business.status).toBe(422);
    expect(locs(await jsonOf(business))).toEqual([['path', 'business_id']]);
    const conversation = await api.get(`${t.base}/conversations/${encodeURIComponent(bad)}/messages`, { headers: t.key });
    expect(conversation.status).toBe(422);
    expect(locs(await jsonOf(conversation))).toEqual([['path', 'conversation_id']]);
  });

  it('a path id past 2147483647 is a 404, as any unknown id; 2147483647 itself is merely unknown', async () => {
    const t = await restTenant();
    const business = await api.get(`/api/v1/businesses/${TOO_BIG_ID}/conversations`, {
      headers: { 'x-api-key': PLATFORM_KEY() },
    });
    expect(business.status).toBe(404);
    expect(await jsonOf(business)).toEqual({ detail: 'Business not found' });
    for (const unknown of [TOO_BIG_ID, 2_147_483_647]) {
      const res = await api.get(`${t.base}/conversations/${unknown}/messages`, { headers: t.key });
      expect(res.status, String(unknown)).toBe(404);
    }
  });

  it.each(NOT_POSITIVE_INTEGERS)('a query id of %j is a 422 naming it', async (bad) => {
    const t = await restTenant();
    const res = await api.get(`${t.base}/conversations?location_id=${encodeURIComponent(bad)}`, { headers: t.key });
    expect(res.status).toBe(422);
    expect(locs(await jsonOf(res))).toEqual([['query', 'location_id']]);
  });

  it('page and page_size in a query are digits too (0x10 and 1e2 were read as 16 and 100)', async () => {
    const t = await restTenant();
    const res = await api.get(`${t.base}/conversations?page=0x10&page_size=1e2`, { headers: t.key });
    expect(res.status).toBe(422);
    expect(locs(await jsonOf(res))).toEqual([
      ['query', 'page'],
      ['query', 'page_size'],
    ]);
    const ok = await api.get(`${t.base}/conversations?page=2&page_size=10`, { headers: t.key });
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ page: 2, page_size: 10 });
  });

  it.each([
    ['true', () => true],
    ['[client]', (client: number) => [client]],
    ['"client"', (client: number) => String(client)],
    ['1.5', () => 1.5],
    ['null', () => null],
  ])('a body client_id of %s is a 422 invalid_type naming it, and nothing is created', async (_, bad) => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const conversation = await postJson(`${t.base}/conversations`, t.key, { client_id: bad(client.id) });
    expect(conversation.status).toBe(422);
    // invalid_type: refused as a value, not looked up (true was client 1, "7" and [7] client 7).
    expect(conversation.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'client_id'], type: 'invalid_type' })]);
    const sms = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [{ client_id: bad(client.id), message: 'hi' }],
    });
    expect(sms.status).toBe(422);
    expect(sms.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'messages', 0, 'client_id'], type: 'invalid_type' }),
    ]);
    expect(await messageCount(t.business.id)).toBe(0);
    // The same requests with the JSON integer work.
    expect((await postJson(`${t.base}/conversations`, t.key, { client_id: client.id })).status).toBe(200);
    const good = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [{ client_id: client.id, message: 'hi' }],
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
  });

  it('POST …/email/record with messages[0].message_id: true is a 422, though record mode ignores message_id', async () => {
    const t = await restTenant();
    const record = (message_id: unknown) =>
      postJson(`${t.base}/email/record`, t.key, {
        sender_type: 'system',
        messages: [{ message_id, to_email: 'ava@example.com', subject: 'Hi', message: 'hi' }],
      });
    for (const bad of [true, [3], '3']) {
      const res = await record(bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'messages', 0, 'message_id']]);
    }
    expect(await messageCount(t.business.id)).toBe(0);
    // A well-typed one is still ignored, as documented.
    expect((await record(123456)).status).toBe(200);
  });

  it('POST /messages/{business_id}: a field only the other mode reads is type-checked, then ignored', async () => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const sms = { channel: 'sms', sender_type: 'system' };
    const item = { to_number: '+14155550123', message: 'hi' };
    const recorded = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      ...sms,
      mode: 'record',
      send_at: true,
      override_quiet_hours: 'yes',
      messages: [{ ...item, media_ids: [true], saved_reply_id: '3' }],
    });
    expect(recorded.status).toBe(422);
    expect(locs(recorded.body)).toEqual([
      ['body', 'send_at'],
      ['body', 'override_quiet_hours'],
      ['body', 'messages', 0, 'saved_reply_id'],
      ['body', 'messages', 0, 'media_ids', 0],
    ]);
    const sent = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      ...sms,
      mode: 'send',
      messages: [{ ...item, message_id: true, direction: 1, provider_message_id: ['SM1'] }],
    });
    expect(sent.status).toBe(422);
    expect(locs(sent.body)).toEqual([
      ['body', 'messages', 0, 'message_id'],
      ['body', 'messages', 0, 'direction'],
      ['body', 'messages', 0, 'provider_message_id'],
    ]);
    const email = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      channel: 'email',
      mode: 'record',
      sender_type: 'system',
      cancel_on_reply: 'no',
      messages: [{ to_email: 'ava@example.com', subject: 'Hi', message: 'hi', saved_reply_id: true }],
    });
    expect(email.status).toBe(422);
    expect(locs(email.body)).toEqual([
      ['body', 'cancel_on_reply'],
      ['body', 'messages', 0, 'saved_reply_id'],
    ]);
    expect(await messageCount(t.business.id)).toBe(0);
    // Well typed, they are ignored by the mode that does not read them: a past send_at records.
    const fine = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      ...sms,
      mode: 'record',
      send_at: '2020-01-01T00:00:00Z',
      messages: [{ ...item, media_ids: [7] }],
    });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    expect(await messageCount(t.business.id)).toBe(1);
  });
});

describe('timestamps checked against the calendar', () => {
  it.each([
    ['next tuesday', 'next tuesday'],
    ['yesterday', 'yesterday'],
    ['a day-first date', '31/12/2026 10:00'],
    ['200,000 characters', 'x'.repeat(200_000)],
    ['a bare date', '2099-12-01'],
    ['24:01', '2099-12-01T24:01:00Z'],
  ])('snoozed_until of %s → 422', async (_, value) => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const res = await postJson(`${t.base}/conversations/${conversation.id}/status`, t.key, {
      status: 'snoozed',
      snoozed_until: value,
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'snoozed_until']]);
  });

  it('sent_at of 30 February is a 422 on /sms/record and /email, and nothing is stored', async () => {
    const t = await restTenant();
    const sms = await postJson(`${t.base}/sms/record`, t.key, {
      sender_type: 'system',
      sent_at: '2026-02-30T10:00:00Z',
      messages: [{ to_number: '+14155550123', message: 'hi' }],
    });
    expect(sms.status).toBe(422);
    expect(locs(sms.body)).toEqual([['body', 'sent_at']]);
    const email = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      sent_at: '2026-02-30T10:00:00Z',
      messages: [{ to_email: 'ava@example.com', subject: 'Hi', message: 'hi' }],
    });
    expect(email.status).toBe(422);
    expect(locs(email.body)).toEqual([['body', 'sent_at']]);
    expect(await messageCount(t.business.id)).toBe(0);
  });
});

describe('bounded strings', () => {
  it('a 200,000-character from_email is a 422 and no email is queued', async () => {
    const t = await restTenant();
    const res = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      from_email: `${'a'.repeat(200_000)}@example.com`,
      messages: [{ to_email: 'ava@example.com', subject: 'Hi', message: 'hi' }],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'from_email']]);
    expect(await messageCount(t.business.id)).toBe(0);
  });

  it('an attachment of 40,000 spaces and one bad character is refused at once (no quadratic backtracking)', async () => {
    const t = await restTenant();
    const started = performance.now();
    const res = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'system',
      messages: [
        {
          to_email: 'ava@example.com',
          subject: 'Hi',
          message: 'hi',
          attachments: [{ filename: 'a.txt', content: `${' '.repeat(1_000_000)}!` }],
        },
      ],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'messages', 0, 'attachments', 0, 'content']]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a search page past the result window is a 422, not an overflowing cast', async () => {
    const t = await restTenant();
    for (const page of ['2147483648', '1000000']) {
      const res = await api.get(`/api/v1/messages/${t.business.id}/search?search_term=hello&page=${page}&page_size=100`, {
        headers: t.key,
      });
      expect(res.status).toBe(422);
      expect(locs(await jsonOf(res))).toEqual([['query', 'page']]);
    }
  });
});

describe('text PostgreSQL cannot store', () => {
  it.each([
    ['U+0000', 'hello\u0000there'],
    ['a lone surrogate', 'hello\ud800there'],
  ])('%s in a body, a query or a key is a 422 naming the field', async (_, bad) => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const note = await postJson(`${t.base}/conversations/${conversation.id}/notes`, t.key, { content: bad });
    expect(note.status).toBe(422);
    expect(locs(note.body)).toEqual([['body', 'content']]);

    const sms = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [{ to_number: '+14155550123', message: 'fine', provider_metadata: { [bad]: 1 } }],
    });
    expect(sms.status).toBe(422);
    expect(locs(sms.body)).toEqual([['body', 'messages', 0, 'provider_metadata', bad]]);

    // Percent-encoded as a client would send it (a lone surrogate as the bytes of its UTF-8 form).
    const encoded = bad.includes('\u0000') ? 'hello%00there' : 'hello%ED%A0%80there';
    const listed = await api.get(`${t.base}/clients?search=${encoded}`, { headers: t.key });
    if (bad.includes('\u0000')) {
      expect(listed.status).toBe(422);
      expect(locs(await jsonOf(listed))).toEqual([['query', 'search']]);
    } else {
      // A lone surrogate cannot survive percent-encoding (it becomes U+FFFD): an ordinary search.
      expect(listed.status).toBe(200);
    }
    expect(await messageCount(t.business.id)).toBe(0);
  });

  it('JSON nested past 32 levels is a 422 at once, however deep (nothing recurses over it)', async () => {
    const t = await restTenant();
    const nested = (depth: number) =>
      `{"sender_type":"system","messages":[{"to_number":"+14155550123","message":"x","provider_metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}]}`;
    const headers = { ...t.key, 'content-type': 'application/json' };
    for (const depth of [100, 1_000_000]) {
      const started = performance.now();
      const res = await api.post(`${t.base}/sms`, { headers, body: nested(depth) });
      expect(res.status).toBe(422);
      const [issue] = (await jsonOf(res)).detail;
      expect(issue.type).toBe('too_deep');
      expect(issue.loc.slice(0, 6)).toEqual(['body', 'messages', 0, 'provider_metadata', 'a', 0]);
      expect(performance.now() - started).toBeLessThan(3000);
    }
    expect(await messageCount(t.business.id)).toBe(0);
  });
});

describe('Idempotency-Key on every POST that creates messages', () => {
  it('a replayed note returns the first answer and creates no second note', async () => {
    const t = await restTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const headers = { ...t.key, 'idempotency-key': 'note-1' };
    const first = await postJson(`${t.base}/conversations/${conversation.id}/notes`, headers, { content: 'Call back after 3' });
    const replay = await api.post(`${t.base}/conversations/${conversation.id}/notes`, {
      headers,
      body: { content: 'Call back after 3' },
    });
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await jsonOf(replay)).data.message_id).toBe(first.body.data.message_id);
    expect(await messageCount(t.business.id)).toBe(1);
    const other = await postJson(`${t.base}/conversations/${conversation.id}/notes`, headers, { content: 'Something else' });
    expect(other.status).toBe(409);
  });
});

describe('found by the fuzzer', () => {
  it('recording an item that names a message_id still needs its message (record mode ignores message_id): 422, not 500', async () => {
    const t = await restTenant();
    const res = await postJson(`${t.base}/sms/record`, t.key, {
      sender_type: 'system',
      messages: [{ message_id: 1, to_number: '+14155550201' }],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'messages', 0, 'message']]);
  });
});
