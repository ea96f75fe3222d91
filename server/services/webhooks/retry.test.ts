import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages, webhookEvents, type MessageStatus } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import {
  jobsWhere,
  multipartBody,
  postBytes,
  postTwilio,
  TWILIO_PATHS,
  twilioSid,
  type TwilioParams,
} from '@/server/testing/webhooks';
import { startWorker } from '@/workers/index';
import { reprocessEvent } from './retry';
import { onlyRow } from '@/server/testing/messages';
import { twilioErrorMessage } from '@/server/shared/provider-errors';

let phoneCounter = 0;
const newPhone = () => `+1303${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

const eventOf = async (id: number) => (await db.select().from(webhookEvents).where(eq(webhookEvents.id, id)))[0]!;
const eventsByPayload = (field: string, value: string) =>
  db
    .select()
    .from(webhookEvents)
    .where(sql`${webhookEvents.payload}->>${field} = ${value}`);
const messagesBySid = (sid: string) => db.select().from(messages).where(eq(messages.providerMessageId, sid));
const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;

async function tenantWithConversation() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  const conv = await createConversation(t.business.id, client.id);
  return { t, number, client, conv };
}

const statusCallback = (sid: string, MessageStatus: string, extra: TwilioParams = {}) =>
  postTwilio(TWILIO_PATHS.smsStatus, { MessageSid: sid, MessageStatus, AccountSid: 'AC1', ApiVersion: '2010-04-01', ...extra });

/**
 * A status callback for a sid no message has yet: returns the stored (pending) event. `from` is the
 * sending number Twilio reports (the message is looked for in the business that owns it).
 */
async function unmatchedStatus(sid: string, status = 'delivered', from = '+14155550000') {
  const res = await statusCallback(sid, status, { From: from });
  expect(res.status).toBe(200);
  const events = await eventsByPayload('MessageSid', sid);
  expect(events).toHaveLength(1);
  return events[0]!;
}

/** A tenant's status event for a new sid stored before its message exists, then that message, stored in `messageStatus`. */
async function statusBeforeItsMessage(eventStatus: string, messageStatus: MessageStatus) {
  const { conv, number } = await tenantWithConversation();
  const sid = twilioSid('SM');
  const event = await unmatchedStatus(sid, eventStatus, number.phoneNumber);
  const msg = await createMessage(conv, { provider: 'twilio', providerMessageId: sid, status: messageStatus });
  return { conv, event, msg };
}

/**
 * Makes message inserts with content 'boom' fail at the database, for the duration of `fn`.
 * The constraint is NOT VALID so existing rows are not checked; it is always dropped again.
 */
async function withBoomConstraint<T>(fn: () => Promise<T>): Promise<T> {
  await db.execute(sql`alter table messages add constraint test_no_boom check (content is distinct from 'boom') not valid`);
  try {
    return await fn();
  } finally {
    await db.execute(sql`alter table messages drop constraint if exists test_no_boom`);
  }
}

describe('status callback for an unknown MessageSid → webhook.retry', () => {
  it('answers 200, stores the event pending and enqueues a webhook.retry job', async () => {
    const sid = twilioSid('SM');
    const event = await unmatchedStatus(sid);
    expect(event).toMatchObject({ provider: 'twilio', kind: 'sms_status', outcome: 'pending', processedAt: null });
    expect(await jobsWhere('webhook.retry', 'eventId', event.id)).toHaveLength(1);
  });

  it('reprocessing before the message exists throws (so pg-boss retries) and leaves the event pending', async () => {
    const event = await unmatchedStatus(twilioSid('SM'));
    await expect(reprocessEvent(event.id, false)).rejects.toThrow(/MessageSid/);
    expect((await eventOf(event.id)).outcome).toBe('pending');
  });

  it('once the message with that sid exists, reprocessEvent(eventId, false) applies it and marks the event processed', async () => {
    const { conv, event, msg } = await statusBeforeItsMessage('delivered', 'sent');
    await reprocessEvent(event.id, false);
    expect((await messageOf(msg.id)).status).toBe('delivered');
    expect(await eventOf(event.id)).toMatchObject({ outcome: 'processed', businessId: conv.businessId, error: null });
    expect((await eventOf(event.id)).processedAt).toBeInstanceOf(Date);
    // A second run (a duplicate job) changes nothing.
    await reprocessEvent(event.id, false);
    expect((await messageOf(msg.id)).status).toBe('delivered');
  });

  it('a reprocessed undelivered keeps its ErrorCode', async () => {
    const { event, msg } = await statusBeforeItsMessage('undelivered', 'sent');
    await db.execute(sql`update webhook_events set payload = payload || '{"ErrorCode":"30003"}'::jsonb where id = ${event.id}`);
    await reprocessEvent(event.id, false);
    expect(await messageOf(msg.id)).toMatchObject({
      status: 'undelivered',
      errorCode: '30003',
      errorMessage: twilioErrorMessage('30003'),
    });
  });

  it('a reprocessed status that would move the message back is closed as ignored, and the message is untouched', async () => {
    const { event, msg } = await statusBeforeItsMessage('sent', 'delivered');
    await reprocessEvent(event.id, false);
    expect((await messageOf(msg.id)).status).toBe('delivered');
    expect((await eventOf(event.id)).outcome).toBe('ignored');
  });

  it('on the last attempt with still no message, the event is closed as ignored with an error', async () => {
    const sid = twilioSid('SM');
    const event = await unmatchedStatus(sid);
    await reprocessEvent(event.id, true);
    const after = await eventOf(event.id);
    expect(after.outcome).toBe('ignored');
    expect(after.error).toMatch(sid);
    expect(after.processedAt).toBeInstanceOf(Date);
  });

  it('reprocessing an unknown event id or an already processed one is a no-op', async () => {
    await expect(reprocessEvent(2_000_000_000, false)).resolves.toBeUndefined();
    const { t, number } = await tenantWithConversation();
    const params = { MessageSid: twilioSid('SM'), From: newPhone(), To: number.phoneNumber, Body: 'hello', AccountSid: 'AC1' };
    await postTwilio(TWILIO_PATHS.smsIncoming, params);
    const [event] = await eventsByPayload('MessageSid', params.MessageSid);
    const attempts = event!.attempts;
    await reprocessEvent(event!.id, false);
    expect(await eventOf(event!.id)).toMatchObject({ outcome: 'processed', attempts });
    expect(await messagesBySid(params.MessageSid)).toHaveLength(1);
    expect(t.business.id).toBe(event!.businessId);
  });
});

/** An inbound SMS whose body `withBoomConstraint` makes fail. */
const boomSms = (from: string, to: string) => ({
  MessageSid: twilioSid('SM'),
  AccountSid: 'AC1',
  From: from,
  To: to,
  Body: 'boom',
  NumMedia: '0',
});

describe('processing fails, then recovers', () => {
  it('an inbound SMS whose processing fails: 200, event failed with the error, a webhook.retry job; fixed → reprocess creates the message', async () => {
    const { t, number, client, conv } = await tenantWithConversation();
    const params = boomSms(client.phoneNumber!, number.phoneNumber);
    const event = await withBoomConstraint(async () => {
      const res = await postTwilio(TWILIO_PATHS.smsIncoming, params);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('<Response');
      const [stored] = await eventsByPayload('MessageSid', params.MessageSid);
      expect(stored).toMatchObject({ kind: 'sms_incoming', outcome: 'failed' });
      expect(stored!.error).toEqual(expect.any(String));
      expect(stored!.error!.length).toBeGreaterThan(0);
      expect(await jobsWhere('webhook.retry', 'eventId', stored!.id)).toHaveLength(1);
      expect(await messagesBySid(params.MessageSid)).toHaveLength(0);
      // Nothing of the failed transaction is left behind: the conversation is untouched.
      expect((await db.select().from(conversations).where(eq(conversations.id, conv.id)))[0]!.unreadCount).toBe(0);
      // Retrying while the fault persists keeps it failed (the job throws again).
      await expect(reprocessEvent(stored!.id, false)).rejects.toThrow();
      return stored!;
    });

    // A redelivery by Twilio while the event is failed is a duplicate: still one event row.
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, params)).status).toBe(200);
    expect(await eventsByPayload('MessageSid', params.MessageSid)).toHaveLength(1);

    await reprocessEvent(event.id, false);
    expect(onlyRow(await messagesBySid(params.MessageSid))).toMatchObject({
      conversationId: conv.id,
      clientId: client.id,
      content: 'boom',
      status: 'received',
      direction: 'inbound',
    });
    expect(await eventOf(event.id)).toMatchObject({ outcome: 'processed', businessId: t.business.id, error: null });
    expect((await db.select().from(conversations).where(eq(conversations.id, conv.id)))[0]!.unreadCount).toBe(1);
  });

  it('the stored error of a failed event says why it failed (the database reason, not the SQL text)', async () => {
    const { number, client } = await tenantWithConversation();
    const params = boomSms(client.phoneNumber!, number.phoneNumber);
    await withBoomConstraint(() => postTwilio(TWILIO_PATHS.smsIncoming, params));
    const [stored] = await eventsByPayload('MessageSid', params.MessageSid);
    expect(stored!.outcome).toBe('failed');
    expect(stored!.error).toMatch(/violates check constraint "test_no_boom"/);
    expect(stored!.error).not.toMatch(/^Failed query/);
  });

  it('an inbound email whose processing fails is reprocessed from the stored payload, attachments included', async () => {
    const t = await createTenant();
    const messageId = `<${randomUUID()}@mail.example.test>`;
    const sender = `retry.${randomUUID().slice(0, 8)}@example.test`;
    const pdf = Buffer.from('%PDF-1.4\n\x00\xff binary');
    const { contentType, bytes } = await multipartBody(
      {
        from: `Robin <${sender}>`,
        to: t.business.fromEmail!,
        subject: 'Form',
        text: 'boom',
        headers: `Message-ID: ${messageId}\nSubject: Form\n`,
      },
      [{ field: 'attachment1', filename: 'form.pdf', contentType: 'application/pdf', content: pdf }],
    );
    const event = await withBoomConstraint(async () => {
      const res = await postBytes(
        '/api/v1/email/webhooks/sendgrid/inbound?secret=dev-inbound-secret',
        { 'content-type': contentType },
        bytes,
      );
      expect(res.status).toBe(200);
      const [stored] = await db
        .select()
        .from(webhookEvents)
        .where(eq(webhookEvents.dedupeKey, `${t.business.id}:${messageId}`));
      expect(stored).toMatchObject({ kind: 'email_inbound', outcome: 'failed' });
      expect(await jobsWhere('webhook.retry', 'eventId', stored!.id)).toHaveLength(1);
      return stored!;
    });
    await reprocessEvent(event.id, false);
    const [row] = await db.select().from(messages).where(eq(messages.emailMessageId, messageId));
    expect(row).toMatchObject({ businessId: t.business.id, content: 'boom', fromAddress: sender, subject: 'Form' });
    expect(row!.attachments).toEqual([
      expect.objectContaining({ filename: 'form.pdf', content_type: 'application/pdf', size: pdf.length }),
    ]);
    expect((await eventOf(event.id)).outcome).toBe('processed');
  });
});

describe('the webhook.retry worker (in process)', () => {
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  afterAll(async () => {
    await worker?.stop();
  });

  const waitForOutcome = async (eventId: number, ms: number) => {
    const until = Date.now() + ms;
    for (;;) {
      const { outcome } = await eventOf(eventId);
      if (outcome === 'processed' || outcome === 'ignored' || Date.now() > until) return outcome;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('applies a status callback that arrived before its message once the message exists', async () => {
    const { event, msg } = await statusBeforeItsMessage('delivered', 'sent');
    // Close the events earlier tests left pending on purpose, so no other job of the batch throws
    // (each job has its own outcome: one throwing job does not fail the others).
    const leftovers = await db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(sql`${webhookEvents.outcome} in ('pending', 'failed') and ${webhookEvents.id} <> ${event.id}`);
    for (const e of leftovers) await reprocessEvent(e.id, true);
    worker ??= await startWorker();
    expect(await waitForOutcome(event.id, 8_000)).toBe('processed');
    expect((await messageOf(msg.id)).status).toBe('delivered');
  });

  it('one event that cannot be applied yet does not hold back the other events of its batch', async () => {
    const { conv, number } = await tenantWithConversation();
    await worker?.stop();
    worker = undefined;
    const never = await unmatchedStatus(twilioSid('SM'), 'delivered'); // its message never comes
    const sid = twilioSid('SM');
    const ready = await unmatchedStatus(sid, 'delivered', number.phoneNumber);
    const msg = await createMessage(conv, { provider: 'twilio', providerMessageId: sid, status: 'sent' });
    // Both jobs become due (startAfter 3 s) before the worker polls, so they are fetched together.
    await new Promise((r) => setTimeout(r, 3500));
    worker = await startWorker();
    expect(await waitForOutcome(ready.id, 10_000)).toBe('processed'); // worker start-up included; slow on a loaded machine
    // Its own job succeeded: its retry budget is not spent by another event's failure.
    // (The event is written before the batch loop completes its job: wait for the job's outcome.)
    const jobStates = async () => (await jobsWhere('webhook.retry', 'eventId', ready.id)).map((j) => j.state);
    for (const deadline = Date.now() + 10_000; (await jobStates()).includes('active') && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 100));
    expect(await jobStates()).toEqual(['completed']);
    expect((await messageOf(msg.id)).status).toBe('delivered');
    expect((await eventOf(never.id)).outcome).toBe('pending');
  });
});
