import { randomUUID } from 'node:crypto';
import { eq, inArray, sql } from 'drizzle-orm';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages, webhookEvents } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES, type BulkSendJob, type SendJob } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import { createTwilioProvider } from '@/server/providers/twilio';
import { createClient, createConversation, createSmsNumber, createTenant } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { sendJobsFor } from '@/server/testing/send-jobs';
import { jobsWhere, postTwilio, TWILIO_PATHS, twilioSid } from '@/server/testing/webhooks';
import { sendSmsBatch } from '@/server/services/messages/send/sms';
import { retryMessages } from './messages/requests';
import { applyStatusUpdate } from './messages/lifecycle';
import { requeueOrphanedSends, sweepUnprocessedEvents } from './recovery';
import { storeEvent } from './webhooks/events';

/**
 * The fault windows of issue 13, each reproduced at its exact point (a worker that stops after a
 * claim, a provider that answers ambiguously, a process that dies between storing a webhook and
 * processing it) and shown closed. The send handler runs in this process against the real
 * `twilio` client and the fake Twilio API; jobs are built by hand so each attempt is controlled.
 */
const log = logger.child({ test: 'recovery' });
let fake: FakeTwilio;
let provider: ReturnType<typeof createTwilioProvider>;
let tenant: Awaited<ReturnType<typeof createTenant>>;
let fromNumber: string;
let phoneCounter = 0;
const newPhone = () => `+1720${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;
const CALLBACK = 'http://localhost:3000/api/v1/webhooks/twilio/sms/status';

beforeAll(async () => {
  fake = await startFakeTwilio();
  provider = createTwilioProvider({
    accountSid: fake.accountSid,
    authToken: fake.authToken,
    apiBaseUrl: fake.url,
    timeoutMs: 2000,
  });
  tenant = await createTenant();
  fromNumber = (await createSmsNumber(tenant.business.id)).phoneNumber;
});
afterAll(() => fake?.close());

const job = (messageId: number, retryCount = 0, retryLimit = 5) =>
  ({
    id: randomUUID(),
    name: 'sms.send',
    data: { messageId, businessId: tenant.business.id },
    retryCount,
    retryLimit,
  }) as unknown as PgBoss.JobWithMetadata<SendJob>;

/** A bulk queue's chunk job carrying `messageIds` at their first attempt, built by hand like `job`. */
const chunkJob = (messageIds: number[], retryCount = 0, retryLimit = 5) =>
  ({
    id: randomUUID(),
    name: QUEUES.smsSendBulk,
    data: { messageIds, attempts: messageIds.map(() => 1), businessId: tenant.business.id },
    retryCount,
    retryLimit,
  }) as unknown as PgBoss.JobWithMetadata<BulkSendJob>;

/** Past the sweep's minute: the messages' status last changed five minutes ago. */
const inFlightSince5MinutesAgo = (ids: number[]) =>
  db
    .update(messages)
    .set({ statusUpdatedAt: sql`now() - interval '5 minutes'` })
    .where(inArray(messages.id, ids));

const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const atFake = (to: string) => fake.messages.filter((m) => m.to === to);

/** A queued outbound SMS to a new client, as the queue endpoint stores it. */
async function queuedSms(body = `hello ${randomUUID().slice(0, 8)}`) {
  const client = await createClient(tenant.business.id, { phoneNumber: newPhone() });
  const conv = await createConversation(tenant.business.id, client.id);
  const [row] = await db
    .insert(messages)
    .values({
      businessId: tenant.business.id,
      conversationId: conv.id,
      clientId: client.id,
      channel: 'sms',
      direction: 'outbound',
      messageType: 'TEXT',
      senderType: 'system',
      content: body,
      toAddress: client.phoneNumber!,
      fromAddress: fromNumber,
      status: 'queued',
      origin: 'send',
      attempts: 1,
      provider: 'twilio',
    })
    .returning();
  return row!;
}

describe('ambiguous Twilio answers are reconciled before any resend', () => {
  it.each([
    ['a 500 after Twilio created the message', { status: 500, code: 20500, acceptedAnyway: true }],
    ['a 2xx without a message SID', { status: 201, sidless: true, acceptedAnyway: true }],
  ])('%s: the next attempt finds it at Twilio and sends nothing', async (_, reply) => {
    const m = await queuedSms();
    fake.failNext(1, reply);
    const first = await sendSmsBatch([job(m.id)], provider, CALLBACK, log);
    expect([...first.values()][0]).toMatchObject({ ok: false }); // retried by pg-boss
    expect(await messageOf(m.id)).toMatchObject({ status: 'sending', providerMessageId: null });
    expect(atFake(m.toAddress!)).toHaveLength(1);

    await sendSmsBatch([job(m.id, 1)], provider, CALLBACK, log);
    expect(atFake(m.toAddress!)).toHaveLength(1); // not sent a second time
    expect(await messageOf(m.id)).toMatchObject({ status: 'sent', providerMessageId: atFake(m.toAddress!)[0]!.sid });
  });

  it('a message that already failed at Twilio is reconciled as failed with its reason, not as failed without one', async () => {
    const m = await queuedSms();
    fake.failNext(1, { status: 502, acceptedAnyway: true });
    await sendSmsBatch([job(m.id)], provider, CALLBACK, log);
    const atTwilio = atFake(m.toAddress!)[0]!;
    Object.assign(atTwilio, { status: 'undelivered', errorCode: 30003 }); // its callback has not reached us yet
    await sendSmsBatch([job(m.id, 1)], provider, CALLBACK, log);
    expect(await messageOf(m.id)).toMatchObject({
      status: 'undelivered',
      providerMessageId: atTwilio.sid,
      errorCode: '30003',
      errorMessage: expect.stringMatching(/^Twilio error 30003: .*could not be reached/),
    });
    expect(atFake(m.toAddress!)).toHaveLength(1);
  });

  it('a 429 is not ambiguous: it goes back to queued and is sent once on the next attempt', async () => {
    const m = await queuedSms();
    fake.failNext(1, { status: 429, code: 20429 });
    await sendSmsBatch([job(m.id)], provider, CALLBACK, log);
    expect(await messageOf(m.id)).toMatchObject({ status: 'queued' });
    await sendSmsBatch([job(m.id, 1)], provider, CALLBACK, log);
    expect(atFake(m.toAddress!)).toHaveLength(1);
    expect((await messageOf(m.id)).status).toBe('sent');
  });

  it('out of attempts with the outcome unknown, it is looked up once more instead of failed', async () => {
    const m = await queuedSms();
    fake.failNext(1, { status: 503, acceptedAnyway: true });
    await sendSmsBatch([job(m.id, 5, 5)], provider, CALLBACK, log);
    expect(await messageOf(m.id)).toMatchObject({ status: 'sent', providerMessageId: atFake(m.toAddress!)[0]!.sid });
  });
});

describe('a retried message never sticks in sending', () => {
  /** Sent once, then undelivered, then retried: back to queued with a fresh attempt. */
  async function retriedMessage() {
    const m = await queuedSms('same words every time');
    await sendSmsBatch([job(m.id)], provider, CALLBACK, log);
    const firstSid = (await messageOf(m.id)).providerMessageId!;
    await applyStatusUpdate(
      { businessId: tenant.business.id, messageId: m.id },
      { status: 'undelivered', errorCode: '30003' },
      { type: 'provider' },
    );
    const retried = await retryMessages(tenant.business.id, { messageIds: [m.id] }, { type: 'api' });
    expect(retried.message_ids).toEqual([m.id]);
    return { m, firstSid };
  }

  it('the retry clears the provider id and keeps the earlier one aside', async () => {
    const { m, firstSid } = await retriedMessage();
    expect(await messageOf(m.id)).toMatchObject({
      status: 'queued',
      providerMessageId: null,
      previousProviderMessageIds: [firstSid],
    });
  });

  it('a retry whose worker died after the claim, with its job gone, is re-enqueued and sent (not reconciled with the earlier attempt)', async () => {
    const { m, firstSid } = await retriedMessage();
    // The retry's attempt claimed the message and its worker died; pg-boss gave the job up.
    await db
      .update(messages)
      .set({ status: 'sending', statusUpdatedAt: sql`now() - interval '5 minutes'` })
      .where(eq(messages.id, m.id));
    await db.execute(
      sql`update pgboss.job set state = 'failed' where name = 'sms.send' and data->>'messageId' = ${String(m.id)}`,
    );

    expect(await requeueOrphanedSends(log)).toBeGreaterThanOrEqual(1);
    const live = (await jobsWhere('sms.send', 'messageId', m.id)).filter((j) => j.state === 'created');
    expect(live).toHaveLength(1);
    // A second sweep finds the live job and adds nothing.
    await requeueOrphanedSends(log);
    expect((await jobsWhere('sms.send', 'messageId', m.id)).filter((j) => j.state === 'created')).toHaveLength(1);

    await sendSmsBatch([job(m.id, 0)], provider, CALLBACK, log);
    const after = await messageOf(m.id);
    expect(after.status).toBe('sent');
    expect(after.providerMessageId).not.toBe(firstSid); // the earlier attempt was not taken for this one
    expect(atFake(m.toAddress!)).toHaveLength(2); // the original and the one retry, nothing more
  });

  it("a late callback for the earlier attempt does not move the re-queued message, and is closed as the earlier attempt's", async () => {
    const { m, firstSid } = await retriedMessage();
    const res = await postTwilio(TWILIO_PATHS.smsStatus, {
      MessageSid: firstSid,
      MessageStatus: 'delivered',
      From: fromNumber,
      To: m.toAddress!,
      AccountSid: 'AC1',
    });
    expect(res.status).toBe(200);
    expect((await messageOf(m.id)).status).toBe('queued');
    const [event] = await db
      .select()
      .from(webhookEvents)
      .where(
        sql`${webhookEvents.payload}->>'MessageSid' = ${firstSid} and ${webhookEvents.payload}->>'MessageStatus' = 'delivered'`,
      );
    expect(event!.outcome).toBe('pending');
    await db
      .update(webhookEvents)
      .set({ receivedAt: sql`now() - interval '2 minutes'`, processingUntil: null })
      .where(eq(webhookEvents.id, event!.id));
    await sweepUnprocessedEvents(log);
    const [closed] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, event!.id));
    expect(closed).toMatchObject({
      outcome: 'ignored',
      error: `MessageSid ${firstSid} is an earlier attempt of message ${m.id}`,
    });
  });

  it('a message queued a minute ago with a live job is left alone', async () => {
    const m = await queuedSms();
    await inFlightSince5MinutesAgo([m.id]);
    await enqueue(db, 'sms.send', [{ data: { messageId: m.id, businessId: tenant.business.id } }]);
    await requeueOrphanedSends(log);
    expect(await jobsWhere('sms.send', 'messageId', m.id)).toHaveLength(1);
  });

  it('messages carried by a live chunk job are left alone; once the chunk is given up they are re-enqueued together', async () => {
    const [a, b] = [await queuedSms(), await queuedSms()];
    const ids = [a.id, b.id];
    await inFlightSince5MinutesAgo(ids);
    await enqueue(db, QUEUES.smsSendBulk, [{ data: { messageIds: ids, attempts: [1, 1], businessId: tenant.business.id } }]);
    await requeueOrphanedSends(log);
    const [chunk] = await sendJobsFor([a.id]);
    expect((await sendJobsFor(ids)).map((j) => [j.id, j.message_id])).toEqual([
      [chunk!.id, a.id],
      [chunk!.id, b.id],
    ]);

    await db.execute(sql`update pgboss.job set state = 'failed' where id = ${chunk!.id}::uuid`);
    expect(await requeueOrphanedSends(log)).toBeGreaterThanOrEqual(2);
    const live = (await sendJobsFor(ids)).filter((j) => j.state === 'created');
    expect(live.map((j) => [j.name, j.message_id])).toEqual([
      ['sms.send.bulk', a.id],
      ['sms.send.bulk', b.id],
    ]);
    expect(live[0]!.id).toBe(live[1]!.id);
  });

  it('a malformed live chunk job (ids not an array, or null) neither breaks the sweep nor hides an orphan', async () => {
    const orphan = await queuedSms();
    await inFlightSince5MinutesAgo([orphan.id]);
    const malformed = [{ messageIds: { not: 'a list' } }, { messageIds: [null] }, { messageIds: ['x'] }];
    const ids = await db.execute<{ id: string }>(sql`
      insert into pgboss.job (name, data)
      select ${QUEUES.smsSendBulk}, d from jsonb_array_elements(${JSON.stringify(malformed)}::jsonb) d
      returning id::text`);
    try {
      expect(await requeueOrphanedSends(log)).toBeGreaterThanOrEqual(1);
      expect((await sendJobsFor([orphan.id])).filter((j) => j.state === 'created')).toHaveLength(1);
    } finally {
      await db.execute(sql`delete from pgboss.job where id = any(${sql.param(ids.map((r) => r.id))}::uuid[])`);
    }
  });
});

describe('a chunk job (the bulk queues) has one outcome for all its messages', () => {
  it('fails, to be retried whole, when one of its messages is refused for now, even beside one handled already', async () => {
    const [done, busy] = [await queuedSms(), await queuedSms()];
    await sendSmsBatch([job(done.id)], provider, CALLBACK, log);
    expect((await messageOf(done.id)).status).toBe('sent');

    fake.failNext(1, { status: 429, code: 20429 });
    const chunk = chunkJob([done.id, busy.id]);
    const outcomes = await sendSmsBatch([chunk], provider, CALLBACK, log);
    expect(outcomes.get(chunk.id)).toMatchObject({ ok: false, error: expect.stringMatching(/^20429: /) });
    expect((await messageOf(busy.id)).status).toBe('queued');
    expect(atFake(done.toAddress!)).toHaveLength(1);

    // The retry sends only what is left, and the job is done.
    const retry = chunkJob([done.id, busy.id], 1);
    expect((await sendSmsBatch([retry], provider, CALLBACK, log)).get(retry.id)).toEqual({ ok: true });
    expect((await messageOf(busy.id)).status).toBe('sent');
    expect(atFake(done.toAddress!)).toHaveLength(1);
    expect(atFake(busy.toAddress!)).toHaveLength(1);
  });

  it('leaves alone a message failed and retried since it was enqueued: its new attempt has a job of its own, even while that one is in flight', async () => {
    const [retried, other] = [await queuedSms(), await queuedSms()];
    // A chunk's first run: `retried` fails for good (the chunk waits to retry another message, not shown).
    fake.failNext(1, { status: 400, code: 21211 });
    const first = chunkJob([retried.id]);
    await sendSmsBatch([first], provider, CALLBACK, log);
    expect(await messageOf(retried.id)).toMatchObject({ status: 'failed', errorCode: '21211' });
    // Staff retry it: attempt 2, a job of its own, whose worker has just claimed it (sending, no provider id yet).
    expect(
      (await retryMessages(tenant.business.id, { messageIds: [retried.id] }, { type: 'staff', staff_id: tenant.owner.id }))
        .message_ids,
    ).toEqual([retried.id]);
    await db
      .update(messages)
      .set({ status: 'sending', statusUpdatedAt: sql`now()` })
      .where(eq(messages.id, retried.id));
    const before = fake.requests;

    // The chunk's retry (enqueued for attempt 1 of both) sends `other` and does not touch `retried`:
    // no lookup, no send, no status change.
    const retry = chunkJob([retried.id, other.id], 1);
    expect((await sendSmsBatch([retry], provider, CALLBACK, log)).get(retry.id)).toEqual({ ok: true });
    expect(fake.requests - before).toBe(1);
    expect(atFake(other.toAddress!)).toHaveLength(1);
    expect(atFake(retried.toAddress!)).toHaveLength(0);
    expect(await messageOf(retried.id)).toMatchObject({ status: 'sending', providerMessageId: null, attempts: 2 });
  });

  it('a batch of single and chunk jobs: each job gets its own outcome', async () => {
    const [single, c1, c2] = [await queuedSms(), await queuedSms(), await queuedSms()];
    const one = job(single.id);
    const chunk = chunkJob([c1.id, c2.id]);
    const outcomes = await sendSmsBatch([one, chunk], provider, CALLBACK, log);
    expect(outcomes).toEqual(
      new Map([
        [one.id, { ok: true }],
        [chunk.id, { ok: true }],
      ]),
    );
    for (const m of [single, c1, c2]) expect((await messageOf(m.id)).status).toBe('sent');
  });
});

describe('webhooks stored but not processed are processed', () => {
  const inboundParams = (to: string, from: string) => ({
    MessageSid: twilioSid('SM'),
    AccountSid: 'AC1',
    From: from,
    To: to,
    Body: 'are you open saturday?',
    NumMedia: '0',
  });
  const inboundOf = (sid: string) => db.select().from(messages).where(eq(messages.providerMessageId, sid));

  /** The endpoint stored the event and its process died before processing it. */
  async function storedOnly(params: Record<string, string>) {
    const id = await storeEvent({
      provider: 'twilio',
      kind: 'sms_incoming',
      dedupeKey: params.MessageSid!,
      headers: {},
      payload: params,
    });
    expect(id).not.toBeNull();
    return id!;
  }

  it('a redelivery while the first processor still holds the event is a duplicate (no double processing)', async () => {
    const params = inboundParams(fromNumber, newPhone());
    await storedOnly(params);
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, params)).status).toBe(200);
    expect(await inboundOf(params.MessageSid)).toHaveLength(0);
  });

  it("a redelivery after the dead processor's claim lapsed processes the event, once", async () => {
    const params = inboundParams(fromNumber, newPhone());
    const id = await storedOnly(params);
    await db
      .update(webhookEvents)
      .set({ processingUntil: sql`now() - interval '1 second'` })
      .where(eq(webhookEvents.id, id));
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, params)).status).toBe(200);
    expect(await inboundOf(params.MessageSid)).toHaveLength(1);
    expect((await db.select().from(webhookEvents).where(eq(webhookEvents.id, id)))[0]).toMatchObject({
      outcome: 'processed',
      processingUntil: null,
    });
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, params)).status).toBe(200);
    expect(await inboundOf(params.MessageSid)).toHaveLength(1);
  });

  it('the sweep processes an event left unprocessed, once, and only after its claim lapsed', async () => {
    const params = inboundParams(fromNumber, newPhone());
    const id = await storedOnly(params);
    await sweepUnprocessedEvents(log);
    expect(await inboundOf(params.MessageSid)).toHaveLength(0); // still held (it may be mid-processing)

    await db
      .update(webhookEvents)
      .set({ receivedAt: sql`now() - interval '2 minutes'`, processingUntil: sql`now() - interval '1 second'` })
      .where(eq(webhookEvents.id, id));
    await Promise.all([sweepUnprocessedEvents(log), sweepUnprocessedEvents(log)]);
    expect(await inboundOf(params.MessageSid)).toHaveLength(1);
    await sweepUnprocessedEvents(log);
    expect(await inboundOf(params.MessageSid)).toHaveLength(1);
  });

  it('a status callback whose retry job was never enqueued is applied by the sweep once its message has the sid', async () => {
    const m = await queuedSms();
    const sid = twilioSid('SM');
    // The callback races the worker: no message has the sid yet; then the enqueue of its retry is lost.
    expect(
      (
        await postTwilio(TWILIO_PATHS.smsStatus, {
          MessageSid: sid,
          MessageStatus: 'delivered',
          From: fromNumber,
          To: m.toAddress!,
          AccountSid: 'AC1',
        })
      ).status,
    ).toBe(200);
    const [event] = await db
      .select()
      .from(webhookEvents)
      .where(sql`${webhookEvents.payload}->>'MessageSid' = ${sid}`);
    await db.execute(sql`delete from pgboss.job where name = 'webhook.retry' and data->>'eventId' = ${String(event!.id)}`);
    await db.update(messages).set({ status: 'sent', providerMessageId: sid }).where(eq(messages.id, m.id));
    await db
      .update(webhookEvents)
      .set({ receivedAt: sql`now() - interval '2 minutes'` })
      .where(eq(webhookEvents.id, event!.id));

    await sweepUnprocessedEvents(log);
    expect((await messageOf(m.id)).status).toBe('delivered');
    expect((await db.select().from(webhookEvents).where(eq(webhookEvents.id, event!.id)))[0]!.outcome).toBe('processed');
  });
});
