import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, conversations, idempotencyKeys, messages } from '@/db/schema';
import { createClient, createSmsNumber, createStaff, createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { expectAccepted } from '@/server/testing/messages';
import { sendJobsFor } from '@/server/testing/send-jobs';

async function tenantWithNumber() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const headers = { 'x-api-key': t.apiKey };
  const sendSms = (body: unknown) => api.post(`/api/v1/businesses/${t.business.id}/sms`, { headers, body });
  return { ...t, number, headers, sendSms };
}

/** Each message's send jobs as `queue:job` strings, in message id order. */
const jobsFor = async (ids: number[]) => (await sendJobsFor(ids)).map((j) => `${j.name}:${j.id}`);

describe('POST /businesses/{id}/sms (queue)', () => {
  it('stores one queued message per item under one request id, with its job, and creates leads', async () => {
    const t = await tenantWithNumber();
    const known = await createClient(t.business.id, { phoneNumber: '+14155550123' });
    const res = await t.sendSms({
      sender_type: 'staff',
      staff_id: t.owner.id,
      category: 'reminder',
      notification_type: 'appointment_reminder',
      messages: [
        { message: 'Reminder: your cut with Maya is tomorrow at 2:30pm', client_id: known.id },
        { message: 'Welcome to the studio! 🌸', to_number: '(415) 555-0199' },
      ],
    });
    const body = await expectAccepted(res, 2);
    const rows = await db.select().from(messages).where(eq(messages.requestId, body.request_id)).orderBy(messages.id);
    expect(rows.map((r) => r.id)).toEqual(body.message_ids);
    expect(rows.map((r) => r.status)).toEqual(['queued', 'queued']);
    expect(rows[0]).toMatchObject({
      channel: 'sms',
      messageType: 'TEXT',
      direction: 'outbound',
      toAddress: '+14155550123',
      fromAddress: t.number.phoneNumber,
      category: 'reminder',
      staffId: t.owner.id,
      segments: 1,
      encoding: 'GSM-7',
    });
    expect(rows[1]).toMatchObject({ toAddress: '+14155550199', encoding: 'UCS-2' });
    const [lead] = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, t.business.id), eq(clients.phoneNumber, '+14155550199')));
    expect(lead!.clientType).toBe('lead');
    const convs = await db.select().from(conversations).where(eq(conversations.businessId, t.business.id));
    expect(convs).toHaveLength(2);
    expect(convs.find((c) => c.clientId === known.id)!.lastMessageId).toBe(rows[0]!.id);
    // Two messages: one chunk job in the bulk queue carries both.
    const jobs = await jobsFor(body.message_ids);
    expect(jobs).toHaveLength(2);
    expect(jobs[0]).toMatch(/^sms\.send\.bulk:/);
    expect(jobs[1]).toBe(jobs[0]);
  });

  it('a request of one message gets a job of its own in sms.send; one of 120 gets chunks of 50, 50 and 20 in the bulk queue, in item order', async () => {
    const t = await tenantWithNumber();
    const one = await expectAccepted(
      await t.sendSms({ sender_type: 'staff', messages: [{ message: 'Hi', to_number: '+14155550170' }] }),
      1,
    );
    expect(await sendJobsFor(one.message_ids)).toMatchObject([
      { name: 'sms.send', message_id: one.message_ids[0], state: 'created' },
    ]);

    const items = Array.from({ length: 120 }, (_, i) => ({ message: `Hello ${i}`, to_number: `+1415555${String(1000 + i)}` }));
    const bulk = await expectAccepted(await t.sendSms({ sender_type: 'system', messages: items }), 120);
    const jobs = await sendJobsFor(bulk.message_ids);
    expect(jobs.map((j) => j.message_id)).toEqual(bulk.message_ids);
    expect(new Set(jobs.map((j) => j.name))).toEqual(new Set(['sms.send.bulk']));
    const chunks = [...new Set(jobs.map((j) => j.id))].map((id) => jobs.filter((j) => j.id === id).map((j) => j.message_id));
    expect(chunks.map((c) => c.length)).toEqual([50, 50, 20]);
    expect(chunks.flat()).toEqual(bulk.message_ids);
    // Each chunk names the attempt it sends: the first, for new messages.
    expect(new Set(jobs.map((j) => j.attempt))).toEqual(new Set([1]));
  });

  it('one bad item is a 422 naming its index, and nothing of the request is stored or queued', async () => {
    const t = await tenantWithNumber();
    const before = (await db.select({ n: sql<number>`count(*)::int` }).from(messages))[0]!.n;
    const res = await t.sendSms({
      sender_type: 'staff',
      messages: [
        { message: 'ok', to_number: '+14155550111' },
        { message: 'bad number', to_number: 'not-a-number' },
        { message: 'unknown client', client_id: 987654 },
        { to_number: '+14155550112' },
      ],
    });
    expect(res.status).toBe(422);
    const locs = (await jsonOf(res)).detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toEqual(expect.arrayContaining([['body', 'messages', 3, 'message']]));
    // Service-level checks run once the shape is valid.
    const res2 = await t.sendSms({
      sender_type: 'staff',
      messages: [
        { message: 'ok', to_number: '+14155550111' },
        { message: 'x', to_number: 'not-a-number' },
        { message: 'y', client_id: 987654 },
      ],
    });
    expect(res2.status).toBe(422);
    expect((await jsonOf(res2)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'messages', 1, 'to_number'],
      ['body', 'messages', 2, 'client_id'],
    ]);
    const after = (await db.select({ n: sql<number>`count(*)::int` }).from(messages))[0]!.n;
    expect(after).toBe(before);
    expect(await db.select().from(clients).where(eq(clients.phoneNumber, '+14155550111'))).toHaveLength(0);
  });

  it('records an opted-out client as failed with error_code opted_out, and queues no job', async () => {
    const t = await tenantWithNumber();
    const out = await createClient(t.business.id, { optedOutSms: true });
    const res = await t.sendSms({ sender_type: 'staff', messages: [{ message: 'Promo!', client_id: out.id }] });
    expect(res.status).toBe(200);
    const { message_ids } = await jsonOf(res);
    const [row] = await db.select().from(messages).where(eq(messages.id, message_ids[0]));
    expect(row).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
    expect(await jobsFor(message_ids)).toEqual([]);
  });

  it('413 over 1000 items; 422 for an empty list', async () => {
    const t = await tenantWithNumber();
    const many = Array.from({ length: 1001 }, () => ({ message: 'hi', to_number: '+14155550100' }));
    expect((await t.sendSms({ sender_type: 'staff', messages: many })).status).toBe(413);
    expect((await t.sendSms({ sender_type: 'staff', messages: [] })).status).toBe(422);
  });

  it('a message_id re-queues a failed message as it is; a queued or sent one is 409; an unknown one 422', async () => {
    const t = await tenantWithNumber();
    const c = await createClient(t.business.id);
    const first = await jsonOf(await t.sendSms({ sender_type: 'staff', messages: [{ message: 'Hello', client_id: c.id }] }));
    const id = first.message_ids[0];
    const again = await t.sendSms({ sender_type: 'staff', messages: [{ message_id: id }] });
    expect(again.status).toBe(409);
    await db
      .update(messages)
      .set({ status: 'failed', errorCode: '30003', errorMessage: 'Unreachable' })
      .where(eq(messages.id, id));
    const requeue = await t.sendSms({ sender_type: 'staff', messages: [{ message_id: id, message: 'ignored' }] });
    expect(requeue.status).toBe(200);
    expect((await jsonOf(requeue)).message_ids).toEqual([id]);
    const [row] = await db.select().from(messages).where(eq(messages.id, id));
    expect(row).toMatchObject({ status: 'queued', errorCode: null, content: 'Hello', attempts: 2 });
    // The first attempt's job and the re-queue's, each of its own.
    expect((await jobsFor([id])).map((j) => j.split(':')[0])).toEqual(['sms.send', 'sms.send']);
    const unknown = await t.sendSms({ sender_type: 'staff', messages: [{ message_id: 99999999 }] });
    expect(unknown.status).toBe(422);
    expect((await jsonOf(unknown)).detail[0].loc).toEqual(['body', 'messages', 0, 'message_id']);
  });

  it('staff_id: any staff of the business, active or not (a departed member’s messages); another business’s is 422', async () => {
    const t = await tenantWithNumber();
    const other = await createTenant();
    const departed = await createStaff(t.business.id, { active: false });
    const client = await createClient(t.business.id);
    const body = (staffId: number) => ({
      sender_type: 'staff',
      staff_id: staffId,
      messages: [{ message: 'Hi', client_id: client.id }],
    });
    for (const path of ['sms', 'sms/record']) {
      const sent = await api.post(`/api/v1/businesses/${t.business.id}/${path}`, { headers: t.headers, body: body(departed.id) });
      expect(sent.status).toBe(200);
      const [row] = await db
        .select()
        .from(messages)
        .where(eq(messages.id, (await jsonOf(sent)).message_ids[0]));
      expect(row).toMatchObject({ staffId: departed.id });
      const foreign = await api.post(`/api/v1/businesses/${t.business.id}/${path}`, {
        headers: t.headers,
        body: body(other.owner.id),
      });
      expect(foreign.status).toBe(422);
      expect((await jsonOf(foreign)).detail[0].loc).toEqual(['body', 'staff_id']);
    }
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, 409 for another body, and creates nothing twice', async () => {
    const t = await tenantWithNumber();
    const body = { sender_type: 'staff', messages: [{ message: 'Once only', to_number: '+14155550177' }] };
    const headers = { ...t.headers, 'idempotency-key': 'order-42' };
    const a = await api.post(`/api/v1/businesses/${t.business.id}/sms`, { headers, body });
    const b = await api.post(`/api/v1/businesses/${t.business.id}/sms`, { headers, body });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(await jsonOf(b)).toEqual(await jsonOf(a));
    expect(await db.select().from(messages).where(eq(messages.toAddress, '+14155550177'))).toHaveLength(1);
    const other = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers,
      body: { ...body, messages: [{ message: 'Different', to_number: '+14155550177' }] },
    });
    expect(other.status).toBe(409);
    // Scoped to the caller: the platform key may use the same key.
    const platform = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers: { 'x-api-key': PLATFORM_KEY(), 'idempotency-key': 'order-42' },
      body,
    });
    expect(platform.status).toBe(200);
    expect(platform.headers.get('idempotent-replayed')).toBeNull();
  });

  it('two concurrent requests with one key create one set of messages and answer the same', async () => {
    const t = await tenantWithNumber();
    const body = {
      sender_type: 'staff',
      messages: Array.from({ length: 50 }, (_, i) => ({ message: `Bulk ${i}`, to_number: '+14155550178' })),
    };
    const headers = { ...t.headers, 'idempotency-key': 'concurrent-1' };
    const [a, b] = await Promise.all([
      api.post(`/api/v1/businesses/${t.business.id}/sms`, { headers, body }),
      api.post(`/api/v1/businesses/${t.business.id}/sms`, { headers, body }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await jsonOf(a)).toEqual(await jsonOf(b));
    expect(await db.select().from(messages).where(eq(messages.toAddress, '+14155550178'))).toHaveLength(50);
    expect(await db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'concurrent-1'))).toHaveLength(1);
  });
});
