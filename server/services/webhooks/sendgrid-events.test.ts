import { randomBytes, randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages, webhookEvents } from '@/db/schema';
import { clientOptOuts, createClient, createConversation, createMessage, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { installSendgridKeyPair, jobsWhere, sendgridKeyPair, sendgridRequest } from '@/server/testing/webhooks';
import { SENDGRID_SIGNATURE_MAX_AGE_SECONDS } from '@/server/providers/sendgrid-signature';
import { emailErrorMessage } from '@/server/shared/provider-errors';
import { reprocessEvent } from './retry';

// The env module reads process.env once per file, lazily: configure the verification key before any request.
const keys = installSendgridKeyPair();

const EVENTS = '/api/v1/email/webhooks/sendgrid';
const post = (events: unknown[], options: Parameters<typeof sendgridRequest>[2] = {}, privateKey = keys.privateKey) =>
  api.post(EVENTS, sendgridRequest(privateKey, events, options));

const eventsBySgId = (sgEventId: string) => db.select().from(webhookEvents).where(eq(webhookEvents.dedupeKey, sgEventId));
const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const optOutsOf = (id: number) => clientOptOuts(id);
const sgEventId = () => randomBytes(16).toString('base64url');

/** An outbound email as the SMTP worker leaves it: our Message-ID stored as email_message_id (and provider id). */
async function outboundEmail(overrides: Partial<typeof messages.$inferInsert> = {}) {
  const t = await createTenant();
  const client = await createClient(t.business.id);
  const conv = await createConversation(t.business.id, client.id);
  const mid = `<${randomUUID()}@studio.test>`;
  const msg = await createMessage(conv, {
    channel: 'email',
    messageType: 'EMAIL',
    subject: 'Your appointment',
    toAddress: client.email,
    provider: 'smtp',
    providerMessageId: mid,
    emailMessageId: mid,
    status: 'sending',
    ...overrides,
  });
  return { t, client, conv, msg };
}

/** A SendGrid event whose other correlation fields match nothing, so only `match` can find the message. */
function event(type: string, match: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    email: 'client@example.test',
    timestamp: Math.floor(Date.now() / 1000),
    event: type,
    sg_event_id: sgEventId(),
    sg_message_id: `nomatch${randomBytes(6).toString('hex')}.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC1BC-4.0`,
    'smtp-id': `<nomatch-${randomUUID()}@elsewhere.test>`,
    category: ['reminder'],
    ...match,
    ...extra,
  };
}

describe('POST /email/webhooks/sendgrid — signature', () => {
  it('a batch signed by another key is 403 and nothing is stored or applied', async () => {
    const { msg } = await outboundEmail();
    const e = event('delivered', { message_id: String(msg.id) });
    const res = await post([e], {}, sendgridKeyPair().privateKey);
    expect(res.status).toBe(403);
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(0);
    expect((await messageOf(msg.id)).status).toBe('sending');
  });

  it('a signature over a different body (tampered batch) is 403', async () => {
    const { msg } = await outboundEmail();
    const e = event('delivered', { message_id: String(msg.id) });
    const res = await post([e], { signedBody: JSON.stringify([{ ...e, event: 'processed' }]) });
    expect(res.status).toBe(403);
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(0);
  });

  it('a signature with another timestamp header is 403 (the timestamp is signed)', async () => {
    const { msg } = await outboundEmail();
    const e = event('delivered', { message_id: String(msg.id) });
    const now = Math.floor(Date.now() / 1000);
    const req = sendgridRequest(keys.privateKey, [e], { timestamp: String(now) });
    const res = await api.post(EVENTS, {
      ...req,
      headers: { ...req.headers, 'x-twilio-email-event-webhook-timestamp': String(now - 1) },
    });
    expect(res.status).toBe(403);
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(0);
  });

  it('a correctly signed batch whose timestamp is outside the 10-minute window is 403 (a replay); inside it is accepted', async () => {
    const { msg } = await outboundEmail();
    const now = Math.floor(Date.now() / 1000);
    const stale = event('delivered', { message_id: String(msg.id) });
    const res = await post([stale], { timestamp: String(now - SENDGRID_SIGNATURE_MAX_AGE_SECONDS - 60) });
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toEqual({ detail: expect.stringContaining('Stale') });
    const future = event('delivered', { message_id: String(msg.id) });
    expect((await post([future], { timestamp: String(now + SENDGRID_SIGNATURE_MAX_AGE_SECONDS + 60) })).status).toBe(403);
    expect((await post([future], { timestamp: 'yesterday' })).status).toBe(403);
    expect(await eventsBySgId(stale.sg_event_id)).toHaveLength(0);
    expect(await eventsBySgId(future.sg_event_id)).toHaveLength(0);
    expect((await messageOf(msg.id)).status).toBe('sending');

    const late = event('processed', { message_id: String(msg.id) });
    expect((await post([late], { timestamp: String(now - SENDGRID_SIGNATURE_MAX_AGE_SECONDS + 60) })).status).toBe(200);
    expect(await eventsBySgId(late.sg_event_id)).toHaveLength(1);
  });

  it('missing signature headers are 403; garbage in the header is 403, not 500', async () => {
    const { msg } = await outboundEmail();
    const e = event('delivered', { message_id: String(msg.id) });
    expect((await post([e], { signature: null })).status).toBe(403);
    expect((await post([e], { signature: 'not base64 at all !!' })).status).toBe(403);
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(0);
    expect((await messageOf(msg.id)).status).toBe('sending');
  });

  it('a correctly signed batch is accepted', async () => {
    const { msg } = await outboundEmail();
    const res = await post([event('processed', { message_id: String(msg.id) })]);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ received: 1, stored: 1, duplicates: 0 });
  });
});

describe('POST /email/webhooks/sendgrid — events', () => {
  it('processed → delivered → open moves emails to read, found by message_id, by smtp-id and by sg_message_id prefix', async () => {
    const byOurId = await outboundEmail();
    const bySmtpId = await outboundEmail();
    const sgId = `14c5d75ce93${randomBytes(6).toString('hex')}`;
    const bySgId = await outboundEmail({
      provider: 'sendgrid',
      providerMessageId: sgId,
      emailMessageId: `<${randomUUID()}@studio.test>`,
    });
    const matches = [
      { message_id: String(byOurId.msg.id) },
      { 'smtp-id': bySmtpId.msg.emailMessageId },
      { sg_message_id: `${sgId}.filterdrecv-p3las1-5bf99c48d5-ltbhk-20-5F5FC1BC-5.0` },
    ];
    const batch = ['processed', 'delivered', 'open'].flatMap((type) => matches.map((m) => event(type, m)));
    const res = await post(batch);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ received: 9, stored: 9, duplicates: 0 });
    for (const { msg } of [byOurId, bySmtpId, bySgId]) {
      expect(await messageOf(msg.id)).toMatchObject({ status: 'read', errorCode: null, errorMessage: null });
    }
    for (const e of batch) {
      const [stored] = await eventsBySgId(e.sg_event_id);
      expect(stored).toMatchObject({ provider: 'sendgrid', kind: 'sendgrid_event', outcome: 'processed' });
    }
  });

  it('the step statuses are sent then delivered (one event per request)', async () => {
    const { msg } = await outboundEmail();
    await post([event('processed', { message_id: String(msg.id) })]);
    expect((await messageOf(msg.id)).status).toBe('sent');
    await post([event('delivered', { message_id: String(msg.id) })]);
    expect((await messageOf(msg.id)).status).toBe('delivered');
    // A late processed never moves it back.
    await post([event('processed', { message_id: String(msg.id) })]);
    expect((await messageOf(msg.id)).status).toBe('delivered');
  });

  it('message_id wins over smtp-id when they name different messages (docs/providers.md#matching-events-to-messages)', async () => {
    const a = await outboundEmail();
    const b = await outboundEmail();
    await post([event('delivered', { message_id: String(a.msg.id), 'smtp-id': b.msg.emailMessageId })]);
    expect((await messageOf(a.msg.id)).status).toBe('delivered');
    expect((await messageOf(b.msg.id)).status).toBe('sending');
  });

  it('an SMS id in message_id does not match (only email messages)', async () => {
    const { conv } = await outboundEmail();
    const sms = await createMessage(conv, { status: 'sent' });
    const e = event('delivered', { message_id: String(sms.id) });
    await post([e]);
    expect((await messageOf(sms.id)).status).toBe('sent');
    expect((await eventsBySgId(e.sg_event_id))[0]!.outcome).toBe('ignored');
  });

  it('bounce → bounced with plain words and the reason as error_message', async () => {
    const { msg } = await outboundEmail({ status: 'sent' });
    const reason = '550 5.1.1 The email account that you tried to reach does not exist.';
    await post([
      event(
        'bounce',
        { message_id: String(msg.id) },
        { type: 'bounce', status: '5.1.1', reason, bounce_classification: 'Invalid Address' },
      ),
    ]);
    const row = await messageOf(msg.id);
    expect(row).toMatchObject({ status: 'bounced', errorMessage: emailErrorMessage('5.1.1', reason), errorCode: '5.1.1' });
    expect(row.errorMessage).toMatch(
      /^Email error 5\.1\.1: The email address does not exist.*Server reply: 550 5\.1\.1 The email account/,
    );
  });

  it('dropped → failed with the reason', async () => {
    const { msg } = await outboundEmail();
    await post([event('dropped', { message_id: String(msg.id) }, { reason: 'Bounced Address', status: '5.0.0' })]);
    expect(await messageOf(msg.id)).toMatchObject({ status: 'failed', errorMessage: 'Bounced Address' });
  });

  it('deferred changes nothing (the provider is still retrying)', async () => {
    const { msg } = await outboundEmail({ status: 'sent' });
    const e = event('deferred', { message_id: String(msg.id) }, { response: '400 Try again later', attempt: '5' });
    const res = await post([e]);
    expect(res.status).toBe(200);
    expect(await messageOf(msg.id)).toMatchObject({ status: 'sent', errorCode: null, errorMessage: null });
    const [stored] = await eventsBySgId(e.sg_event_id);
    expect(stored!.outcome).not.toBe('failed');
  });

  it('spamreport and unsubscribe opt the client out of email, without changing the message status', async () => {
    const spam = await outboundEmail({ status: 'delivered' });
    const unsub = await outboundEmail({ status: 'delivered' });
    expect((await optOutsOf(spam.client.id)).email).toBe(false);
    await post([
      event('spamreport', { message_id: String(spam.msg.id) }),
      event('unsubscribe', { 'smtp-id': unsub.msg.emailMessageId }),
    ]);
    for (const { client, msg } of [spam, unsub]) {
      expect(await optOutsOf(client.id)).toEqual({ email: true, sms: false });
      expect((await messageOf(msg.id)).status).toBe('delivered');
    }
    // The next email to that client is recorded failed/opted_out, not queued.
    const res = await api.post(`/api/v1/businesses/${spam.t.business.id}/email`, {
      headers: { 'x-api-key': spam.t.apiKey },
      body: { sender_type: 'staff', messages: [{ client_id: spam.client.id, subject: 'Hello', message: 'Hi again' }] },
    });
    expect(res.status).toBe(200);
    const [id] = (await jsonOf(res)).message_ids as number[];
    expect(await messageOf(id!)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
  });

  it('a duplicate sg_event_id is one event row and applied once', async () => {
    const { msg } = await outboundEmail();
    const e = event('delivered', { message_id: String(msg.id) });
    const first = await post([e]);
    expect(await jsonOf(first)).toEqual({ received: 1, stored: 1, duplicates: 0 });
    const again = await post([e, e]);
    expect(again.status).toBe(200);
    expect(await jsonOf(again)).toEqual({ received: 2, stored: 0, duplicates: 2 });
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(1);
  });

  it('the same sg_event_id twice within one batch is stored once', async () => {
    const { msg } = await outboundEmail();
    const e = event('open', { message_id: String(msg.id) });
    const res = await post([e, { ...e }]);
    expect(await jsonOf(res)).toMatchObject({ received: 2, duplicates: 1 });
    expect(await eventsBySgId(e.sg_event_id)).toHaveLength(1);
  });

  it('an event that matches no message is stored as ignored (with the payload)', async () => {
    const e = event('delivered', { message_id: '999999999' });
    const res = await post([e]);
    expect(res.status).toBe(200);
    const [stored] = await eventsBySgId(e.sg_event_id);
    expect(stored).toMatchObject({ outcome: 'ignored', kind: 'sendgrid_event', businessId: null });
    expect(stored!.payload).toMatchObject({ sg_event_id: e.sg_event_id, event: 'delivered' });
  });

  it('a batch mixing messages applies each event to its own message', async () => {
    const a = await outboundEmail();
    const b = await outboundEmail({ status: 'sent' });
    await post([
      event('delivered', { message_id: String(a.msg.id) }),
      event('dropped', { message_id: String(b.msg.id) }, { reason: 'Invalid' }),
      event('open', { message_id: String(a.msg.id) }),
    ]);
    expect((await messageOf(a.msg.id)).status).toBe('read');
    expect((await messageOf(b.msg.id)).status).toBe('failed');
  });

  it('a body that is not a JSON array is refused (no events stored)', async () => {
    const before = (await db.select({ n: sql<number>`count(*)::int` }).from(webhookEvents))[0]!.n;
    const body = JSON.stringify({ event: 'delivered' });
    const res = await api.post(EVENTS, { headers: sendgridRequest(keys.privateKey, [], { signedBody: body }).headers, body });
    expect(res.status).toBe(422);
    expect((await db.select({ n: sql<number>`count(*)::int` }).from(webhookEvents))[0]!.n).toBe(before);
  });

  // docs/api.md#webhook-storage-and-dedupe: stored, then processed idempotently. A processing failure is recorded on the stored
  // event (`failed`), answered 200 (the event is safe) and applied later by the webhook.retry job.
  it('an event whose processing failed is applied later by the retry job, not lost as a duplicate', async () => {
    const { msg } = await outboundEmail({ status: 'sent' });
    const e = event('dropped', { message_id: String(msg.id) }, { reason: 'boom' });
    await db.execute(
      sql`alter table messages add constraint test_no_boom_error check (error_message is distinct from 'boom') not valid`,
    );
    try {
      const res = await post([e]);
      expect(res.status).toBe(200);
      expect((await eventsBySgId(e.sg_event_id))[0]).toMatchObject({
        outcome: 'failed',
        error: expect.stringContaining('test_no_boom_error'),
      });
    } finally {
      await db.execute(sql`alter table messages drop constraint if exists test_no_boom_error`);
    }
    expect((await messageOf(msg.id)).status).toBe('sent');
    const redelivered = await post([e]);
    expect(redelivered.status).toBe(200);
    const [stored] = await eventsBySgId(e.sg_event_id);
    expect(await jobsWhere('webhook.retry', 'eventId', stored!.id)).toHaveLength(1);
    await reprocessEvent(stored!.id, false);
    expect(await messageOf(msg.id)).toMatchObject({ status: 'failed', errorMessage: 'boom' });
    expect((await eventsBySgId(e.sg_event_id))[0]!.outcome).toBe('processed');
  });
});
