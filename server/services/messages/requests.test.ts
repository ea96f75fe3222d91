import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages, type MessageStatus } from '@/db/schema';
import { MessageItem } from '@/server/schemas/messages';
import {
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createTenant,
  PLATFORM_KEY,
} from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { sendJobsFor } from '@/server/testing/send-jobs';

/**
 * docs/api.md#bulk-requests: `GET /messages/{business_id}/requests/{request_id}`, the platform
 * `GET /messages/requests/{request_id}`, and docs/api.md#retry: `POST /messages/{business_id}/retry` and
 * `POST /messages/{business_id}/requests/{request_id}/retry`.
 */

async function tenant() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const headers = { 'x-api-key': t.apiKey };
  return { ...t, number, headers };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

/** Queues `n` SMS in one request through the API; returns the request id and ids in item order. */
async function queueRequest(t: Tenant, n: number, extra: Record<string, unknown> = {}) {
  const client = await createClient(t.business.id);
  const res = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
    headers: t.headers,
    body: {
      sender_type: 'staff',
      ...extra,
      messages: Array.from({ length: n }, (_, i) => ({ message: `Item ${i}`, client_id: client.id })),
    },
  });
  expect(res.status).toBe(200);
  const body = (await jsonOf(res)) as { request_id: string; message_ids: number[] };
  return { requestId: body.request_id, ids: body.message_ids, client };
}

const setStatus = (ids: number[], status: MessageStatus, error?: { code: string; message: string }) =>
  db
    .update(messages)
    .set({ status, errorCode: error?.code ?? null, errorMessage: error?.message ?? null })
    .where(inArray(messages.id, ids));

/** Jobs per message id (any queue), as a map id → [queue names]. */
async function jobsByMessage(ids: number[]) {
  const rows = await sendJobsFor(ids);
  const out = new Map<number, string[]>(ids.map((id) => [id, []]));
  for (const r of rows) out.get(r.message_id)!.push(r.name);
  return out;
}

const rowsOf = async (ids: number[]) => {
  const rows = await db.select().from(messages).where(inArray(messages.id, ids));
  return new Map(rows.map((r) => [r.id, r]));
};

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('GET /messages/{business_id}/requests/{request_id}', () => {
  it("returns the request's messages in item order with a summary over the whole request", async () => {
    const t = await tenant();
    const { requestId, ids } = await queueRequest(t, 5);
    await setStatus([ids[1]!, ids[3]!], 'failed', { code: '30003', message: 'Unreachable' });
    await setStatus([ids[4]!], 'delivered');
    const res = await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}`, { headers: t.headers });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ request_id: requestId, total_messages: 5, page: 1, page_size: 25, next_page: false });
    expect(body.messages.map((m: { message_id: number }) => m.message_id)).toEqual(ids);
    expect(body.messages.map((m: { content: string }) => m.content)).toEqual(['Item 0', 'Item 1', 'Item 2', 'Item 3', 'Item 4']);
    expect(body.summary).toEqual({ queued: 2, failed: 2, delivered: 1 });
    expect(body.messages[1]).toMatchObject({ message_status: 'failed', error_code: '30003', error_message: 'Unreachable' });
  });

  it('paginates: page_size 2 over 5 messages, next_page true until the last page; summary always whole-request', async () => {
    const t = await tenant();
    const { requestId, ids } = await queueRequest(t, 5);
    await setStatus([ids[0]!], 'sent');
    const page = async (p: number) => {
      const res = await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}?page=${p}&page_size=2`, {
        headers: t.headers,
      });
      expect(res.status).toBe(200);
      return jsonOf(res);
    };
    const [p1, p2, p3] = [await page(1), await page(2), await page(3)];
    expect(p1).toMatchObject({ page: 1, page_size: 2, total_messages: 5, next_page: true });
    expect(p2).toMatchObject({ page: 2, page_size: 2, total_messages: 5, next_page: true });
    expect(p3).toMatchObject({ page: 3, page_size: 2, total_messages: 5, next_page: false });
    const seen = [p1, p2, p3].flatMap((p) => p.messages.map((m: { message_id: number }) => m.message_id));
    expect(seen).toEqual(ids);
    for (const p of [p1, p2, p3]) expect(p.summary).toEqual({ sent: 1, queued: 4 });
    const past = await page(4);
    expect(past).toMatchObject({ messages: [], total_messages: 5, next_page: false });
  });

  it('validates paging: page_size over 100 or page 0 is a 422 on the query', async () => {
    const t = await tenant();
    const { requestId } = await queueRequest(t, 1);
    const big = await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}?page_size=101`, { headers: t.headers });
    expect(big.status).toBe(422);
    expect((await jsonOf(big)).detail[0].loc).toEqual(['query', 'page_size']);
    const zero = await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}?page=0`, { headers: t.headers });
    expect((await jsonOf(zero)).detail[0].loc).toEqual(['query', 'page']);
  });

  it('an unknown request id is a 404; a non-UUID is a 422 at path.request_id', async () => {
    const t = await tenant();
    const unknown = await api.get(`/api/v1/messages/${t.business.id}/requests/${crypto.randomUUID()}`, { headers: t.headers });
    expect(unknown.status).toBe(404);
    expect(await jsonOf(unknown)).toEqual({ detail: expect.stringMatching(/not found/) });
    const bad = await api.get(`/api/v1/messages/${t.business.id}/requests/not-a-uuid`, { headers: t.headers });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['path', 'request_id']]);
  });

  it("another business's request id is a 404 through this business's path (even with the platform key)", async () => {
    const mine = await tenant();
    const other = await tenant();
    const { requestId } = await queueRequest(other, 2);
    expect((await api.get(`/api/v1/messages/${mine.business.id}/requests/${requestId}`, { headers: mine.headers })).status).toBe(
      404,
    );
    expect(
      (await api.get(`/api/v1/messages/${mine.business.id}/requests/${requestId}`, { headers: { 'x-api-key': PLATFORM_KEY() } }))
        .status,
    ).toBe(404);
    // The owner sees it; a business key on the other business's path is refused.
    expect(
      (await api.get(`/api/v1/messages/${other.business.id}/requests/${requestId}`, { headers: other.headers })).status,
    ).toBe(200);
    expect((await api.get(`/api/v1/messages/${other.business.id}/requests/${requestId}`, { headers: mine.headers })).status).toBe(
      403,
    );
  });

  it('message items have the MessageItem shape: every field, sent_at ISO with milliseconds, client_name and staff_name', async () => {
    const t = await tenant();
    const { requestId, ids, client } = await queueRequest(t, 1, {
      staff_id: t.owner.id,
      category: 'reminder',
      notification_type: 'appointment_reminder',
    });
    const res = await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}`, { headers: t.headers });
    const [item] = (await jsonOf(res)).messages;
    expect(Object.keys(item).sort()).toEqual(Object.keys(MessageItem.shape).sort());
    expect(MessageItem.safeParse(item).success).toBe(true);
    expect(item.sent_at).toMatch(ISO_MS);
    const [row] = await db.select().from(messages).where(eq(messages.id, ids[0]!));
    expect(new Date(item.sent_at).getTime()).toBe(row!.sentAt.getTime());
    expect(item).toMatchObject({
      message_id: ids[0],
      client_id: client.id,
      conversation_id: row!.conversationId,
      client_name: client.name,
      staff_name: t.owner.name,
      message_type: 'TEXT',
      channel: 'sms',
      direction: 'outbound',
      message_category: 'reminder',
      notification_type: 'appointment_reminder',
      message_status: 'queued',
      request_id: requestId,
      to_address: client.phoneNumber,
      from_address: t.number.phoneNumber,
      attempts: 1,
      segments: 1,
      error_code: null,
    });
  });

  it('without a staff member the item has staff_name null', async () => {
    const t = await tenant();
    const { requestId } = await queueRequest(t, 1);
    const [item] = (
      await jsonOf(await api.get(`/api/v1/messages/${t.business.id}/requests/${requestId}`, { headers: t.headers }))
    ).messages;
    expect(item.staff_name).toBeNull();
    expect(item.client_name).toEqual(expect.any(String));
  });

  // Decided: a request lists its messages in creation order (message id), so a re-queued older
  // message keeps its place before the new ones; the POST answer keeps item order.
  it('a request mixing a new item and a re-queued older message lists them in creation order', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const first = await queueRequest(t, 1);
    await setStatus(first.ids, 'failed', { code: '30003', message: 'Unreachable' });
    const res = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers: t.headers,
      body: { sender_type: 'staff', messages: [{ message: 'brand new', client_id: c.id }, { message_id: first.ids[0] }] },
    });
    expect(res.status).toBe(200);
    const { request_id, message_ids } = await jsonOf(res);
    expect(message_ids[1]).toBe(first.ids[0]);
    const listed = await jsonOf(
      await api.get(`/api/v1/messages/${t.business.id}/requests/${request_id}`, { headers: t.headers }),
    );
    expect(listed.messages.map((m: { message_id: number }) => m.message_id)).toEqual([...message_ids].sort((a, b) => a - b));
  });
});

describe('GET /messages/requests/{request_id} (platform)', () => {
  it('answers the platform key for any business, and 403 to a business key or a session', async () => {
    const t = await tenant();
    const { requestId, ids } = await queueRequest(t, 3);
    const res = await api.get(`/api/v1/messages/requests/${requestId}?page_size=2`, { headers: { 'x-api-key': PLATFORM_KEY() } });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({
      request_id: requestId,
      total_messages: 3,
      page_size: 2,
      next_page: true,
      summary: { queued: 3 },
    });
    expect(body.messages.map((m: { message_id: number }) => m.message_id)).toEqual(ids.slice(0, 2));
    expect((await api.get(`/api/v1/messages/requests/${requestId}`, { headers: t.headers })).status).toBe(403);
    expect(
      (await api.get(`/api/v1/messages/requests/${requestId}`, { headers: { authorization: `Bearer ${t.sessionToken}` } }))
        .status,
    ).toBe(403);
    expect((await api.get(`/api/v1/messages/requests/${requestId}`)).status).toBe(401);
  });

  it('unknown request → 404, non-UUID → 422', async () => {
    const headers = { 'x-api-key': PLATFORM_KEY() };
    expect((await api.get(`/api/v1/messages/requests/${crypto.randomUUID()}`, { headers })).status).toBe(404);
    const bad = await api.get(`/api/v1/messages/requests/12345`, { headers });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail[0].loc).toEqual(['path', 'request_id']);
  });
});

// ---------------------------------------------------------------------------------------------

/** One outbound message in each state retry must consider, plus an inbound one and an email. */
async function retryFixture(t: Tenant) {
  const c = await createClient(t.business.id);
  const conv = await createConversation(t.business.id, c.id);
  const mk = (o: Parameters<typeof createMessage>[1]) => createMessage(conv, { provider: 'sandbox', ...o });
  return {
    conv,
    failed: await mk({ status: 'failed', errorCode: '30003', errorMessage: 'Unreachable handset', attempts: 1 }),
    undelivered: await mk({ status: 'undelivered', errorCode: '30005', errorMessage: 'Unknown destination', attempts: 2 }),
    delivered: await mk({ status: 'delivered', attempts: 1 }),
    queued: await mk({ status: 'queued', attempts: 1 }),
    inbound: await mk({ direction: 'inbound', status: 'received', senderType: 'client', isRead: false }),
    failedEmail: await mk({
      channel: 'email',
      messageType: 'EMAIL',
      subject: 'Receipt',
      status: 'failed',
      errorCode: '550',
      errorMessage: 'Mailbox unavailable',
      attempts: 1,
    }),
    note: await mk({ messageType: 'NOTE', channel: null, status: 'sent', provider: null, providerMessageId: null }),
  };
}

describe('POST /messages/{business_id}/retry', () => {
  it('re-queues only outbound failed/undelivered messages (error cleared, attempts + 1, a send job each); the rest are skipped with a reason', async () => {
    const t = await tenant();
    const f = await retryFixture(t);
    const all = [f.failed, f.undelivered, f.delivered, f.queued, f.inbound, f.failedEmail, f.note];
    const ids = all.map((m) => m.id);
    const before = await jobsByMessage(ids);
    expect([...before.values()].flat()).toEqual([]);

    const res = await api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: t.headers, body: { message_ids: ids } });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body.success).toBe(true);
    expect(body.updated).toBe(3);
    expect([...body.message_ids].sort((a: number, b: number) => a - b)).toEqual(
      [f.failed.id, f.undelivered.id, f.failedEmail.id].sort((a, b) => a - b),
    );
    const skipped = new Map<number, string>(
      body.skipped.map((s: { message_id: number; reason: string }) => [s.message_id, s.reason]),
    );
    expect([...skipped.keys()].sort((a, b) => a - b)).toEqual(
      [f.delivered.id, f.queued.id, f.inbound.id, f.note.id].sort((a, b) => a - b),
    );
    expect(skipped.get(f.delivered.id)).toMatch(/delivered/);
    expect(skipped.get(f.queued.id)).toMatch(/queued/);
    expect(skipped.get(f.inbound.id)).toMatch(/inbound/);
    for (const reason of skipped.values()) expect(reason.length).toBeGreaterThan(0);

    const rows = await rowsOf(ids);
    for (const m of [f.failed, f.undelivered, f.failedEmail]) {
      expect(rows.get(m.id)).toMatchObject({ status: 'queued', errorCode: null, errorMessage: null, attempts: m.attempts + 1 });
    }
    for (const m of [f.delivered, f.queued, f.inbound, f.note]) {
      expect(rows.get(m.id)).toMatchObject({ status: m.status, attempts: m.attempts, errorCode: m.errorCode });
    }
    const jobs = await jobsByMessage(ids);
    // Two texts: one chunk job carries both; the one email has a job of its own.
    expect(jobs.get(f.failed.id)).toEqual(['sms.send.bulk']);
    // The chunk sends the new attempt of each (the retry counted it), no other.
    const chunk = await sendJobsFor([f.failed.id, f.undelivered.id]);
    expect(chunk.map((j) => [j.message_id, j.attempt])).toEqual(
      [f.failed, f.undelivered].map((m) => [m.id, m.attempts + 1]).sort((a, b) => a[0]! - b[0]!),
    );
    expect(jobs.get(f.undelivered.id)).toEqual(['sms.send.bulk']);
    expect(jobs.get(f.failedEmail.id)).toEqual(['email.send']);
    for (const m of [f.delivered, f.queued, f.inbound, f.note]) expect(jobs.get(m.id)).toEqual([]);

    // A second retry finds nothing left to do: queued now, skipped, no new jobs.
    const again = await jsonOf(
      await api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: t.headers, body: { message_ids: [f.failed.id] } }),
    );
    expect(again).toMatchObject({
      updated: 0,
      message_ids: [],
      skipped: [{ message_id: f.failed.id, reason: expect.stringMatching(/queued/) }],
    });
    expect((await jobsByMessage([f.failed.id])).get(f.failed.id)).toEqual(['sms.send.bulk']);
  });

  it('an id of another business is a 422 at body.message_ids[i], and nothing is re-queued', async () => {
    const mine = await tenant();
    const other = await tenant();
    const f = await retryFixture(mine);
    const theirs = await retryFixture(other);
    const unknown = 2_000_000_000;
    const res = await api.post(`/api/v1/messages/${mine.business.id}/retry`, {
      headers: mine.headers,
      body: { message_ids: [f.failed.id, theirs.failed.id, f.undelivered.id, unknown] },
    });
    expect(res.status).toBe(422);
    expect((await jsonOf(res)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'message_ids', 1],
      ['body', 'message_ids', 3],
    ]);
    const rows = await rowsOf([f.failed.id, f.undelivered.id, theirs.failed.id]);
    expect(rows.get(f.failed.id)!.status).toBe('failed');
    expect(rows.get(f.undelivered.id)!.status).toBe('undelivered');
    expect(rows.get(theirs.failed.id)).toMatchObject({ status: 'failed', attempts: 1, errorCode: '30003' });
    expect([...(await jobsByMessage([f.failed.id, theirs.failed.id])).values()].flat()).toEqual([]);
  });

  it('validates the body: empty or non-integer message_ids are 422', async () => {
    const t = await tenant();
    const empty = await api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: t.headers, body: { message_ids: [] } });
    expect(empty.status).toBe(422);
    expect((await jsonOf(empty)).detail[0].loc).toEqual(['body', 'message_ids']);
    const bad = await api.post(`/api/v1/messages/${t.business.id}/retry`, {
      headers: t.headers,
      body: { message_ids: [1, 'x'] },
    });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail[0].loc).toEqual(['body', 'message_ids', 1]);
  });

  it('two concurrent retries of the same ids re-queue each message exactly once', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id);
    const failed = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        createMessage(
          conv,
          i % 3 === 0
            ? { status: 'undelivered', errorCode: '30005', attempts: 1 }
            : { status: 'failed', errorCode: '30003', attempts: 1 },
        ),
      ),
    );
    const ids = failed.map((m) => m.id);
    for (let round = 0; round < 3; round++) {
      if (round > 0) await setStatus(ids, 'failed', { code: '30003', message: 'again' });
      const [a, b] = await Promise.all([
        api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: t.headers, body: { message_ids: ids } }),
        api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: t.headers, body: { message_ids: [...ids].reverse() } }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      const [ja, jb] = [await jsonOf(a), await jsonOf(b)];
      const union = [...ja.message_ids, ...jb.message_ids].sort((x: number, y: number) => x - y);
      expect(union).toEqual([...ids].sort((x, y) => x - y));
      expect(ja.updated + jb.updated).toBe(ids.length);
      // What one re-queued, the other lists as skipped.
      const skippedIds = [...ja.skipped, ...jb.skipped]
        .map((s: { message_id: number }) => s.message_id)
        .sort((x: number, y: number) => x - y);
      expect(skippedIds).toEqual([...ids].sort((x, y) => x - y));
      const rows = await rowsOf(ids);
      for (const id of ids) expect(rows.get(id)).toMatchObject({ status: 'queued', attempts: 2 + round, errorCode: null });
      const jobs = await jobsByMessage(ids);
      for (const id of ids) expect(jobs.get(id)).toHaveLength(round + 1);
    }
  });
});

describe('POST /messages/{business_id}/requests/{request_id}/retry', () => {
  it('retries the failed/undelivered messages of that request only', async () => {
    const t = await tenant();
    const { requestId, ids } = await queueRequest(t, 4);
    const outside = await queueRequest(t, 1);
    await setStatus([ids[0]!], 'failed', { code: '30003', message: 'Unreachable' });
    await setStatus([ids[1]!], 'undelivered', { code: '30005', message: 'Unknown' });
    await setStatus([ids[2]!], 'delivered');
    await setStatus(outside.ids, 'failed', { code: '30003', message: 'Unreachable' });
    const jobsBefore = await jobsByMessage([...ids, ...outside.ids]);

    const res = await api.post(`/api/v1/messages/${t.business.id}/requests/${requestId}/retry`, { headers: t.headers });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ success: true, updated: 2 });
    expect([...body.message_ids].sort((a: number, b: number) => a - b)).toEqual([ids[0], ids[1]]);
    expect(body.skipped.map((s: { message_id: number }) => s.message_id)).toEqual([ids[2], ids[3]]);

    const rows = await rowsOf([...ids, ...outside.ids]);
    expect(rows.get(ids[0]!)).toMatchObject({ status: 'queued', errorCode: null, errorMessage: null, attempts: 2, requestId });
    expect(rows.get(ids[1]!)).toMatchObject({ status: 'queued', errorCode: null, attempts: 2 });
    expect(rows.get(ids[2]!)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(rows.get(outside.ids[0]!)).toMatchObject({ status: 'failed', attempts: 1 });
    const jobsAfter = await jobsByMessage([...ids, ...outside.ids]);
    expect(jobsAfter.get(ids[0]!)!.length - jobsBefore.get(ids[0]!)!.length).toBe(1);
    expect(jobsAfter.get(ids[1]!)!.length - jobsBefore.get(ids[1]!)!.length).toBe(1);
    expect(jobsAfter.get(ids[2]!)!.length - jobsBefore.get(ids[2]!)!.length).toBe(0);
    expect(jobsAfter.get(ids[3]!)!.length - jobsBefore.get(ids[3]!)!.length).toBe(0);
    expect(jobsAfter.get(outside.ids[0]!)!.length - jobsBefore.get(outside.ids[0]!)!.length).toBe(0);
  });

  it("unknown request → 404; another business's request → 404 and untouched; non-UUID → 422", async () => {
    const mine = await tenant();
    const other = await tenant();
    expect(
      (await api.post(`/api/v1/messages/${mine.business.id}/requests/${crypto.randomUUID()}/retry`, { headers: mine.headers }))
        .status,
    ).toBe(404);
    const theirs = await queueRequest(other, 1);
    await setStatus(theirs.ids, 'failed', { code: '30003', message: 'x' });
    expect(
      (await api.post(`/api/v1/messages/${mine.business.id}/requests/${theirs.requestId}/retry`, { headers: mine.headers }))
        .status,
    ).toBe(404);
    expect((await rowsOf(theirs.ids)).get(theirs.ids[0]!)).toMatchObject({ status: 'failed', attempts: 1 });
    const bad = await api.post(`/api/v1/messages/${mine.business.id}/requests/nope/retry`, { headers: mine.headers });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail[0].loc).toEqual(['path', 'request_id']);
  });
});
