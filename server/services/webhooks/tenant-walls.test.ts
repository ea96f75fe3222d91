import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { inboundParseForm } from '@/server/providers/webhook-requests';
import { createClient, createConversation, createMessage, createSmsNumber } from '@/server/testing/factories';
import { postJson, restTenant } from '@/server/testing/http';
import { inboundSmsForm, multipartBody, postBytes, postTwilio, TWILIO_PATHS, twilioSid } from '@/server/testing/webhooks';

/**
 * Provider ids between tenants, written as the attacks: an email's Message-ID (chosen by its
 * sender) must not let one business's copy swallow another's, and record mode must not let a
 * tenant claim another tenant's provider id (status events find messages by it).
 */
const INBOUND = '/api/v1/email/webhooks/sendgrid/inbound?secret=dev-inbound-secret';

async function postMail(to: string, messageId: string, envelopeTo: string[]) {
  const { fields, files } = inboundParseForm({
    from: 'Ava Stone <ava@example.com>',
    to,
    subject: 'Booking',
    text: 'Is Friday free?',
    messageId,
    envelope: { from: 'ava@example.com', to: envelopeTo },
  });
  const { contentType, bytes } = await multipartBody(fields, files);
  return postBytes(INBOUND, { 'content-type': contentType }, bytes);
}

const inboundOf = (businessId: number) =>
  db
    .select({ id: messages.id })
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.direction, 'inbound')));

describe('inbound email is deduplicated per business', () => {
  it('one mail to two businesses reaches both; posted again, neither gets a second copy', async () => {
    const a = await restTenant();
    const b = await restTenant();
    const messageId = `<${randomUUID()}@mail.example.com>`;
    const to = `${a.business.fromEmail}, ${b.business.fromEmail}`;
    const res = await postMail(to, messageId, [a.business.fromEmail!, b.business.fromEmail!]);
    expect(res.status).toBe(200);
    expect(await inboundOf(a.business.id)).toHaveLength(1);
    expect(await inboundOf(b.business.id)).toHaveLength(1);
    await postMail(to, messageId, [a.business.fromEmail!, b.business.fromEmail!]);
    expect(await inboundOf(a.business.id)).toHaveLength(1);
    expect(await inboundOf(b.business.id)).toHaveLength(1);
  });

  it('the same Message-ID delivered separately to each business reaches each', async () => {
    const a = await restTenant();
    const b = await restTenant();
    const messageId = `<${randomUUID()}@mail.example.com>`;
    expect((await postMail(a.business.fromEmail!, messageId, [a.business.fromEmail!])).status).toBe(200);
    expect((await postMail(b.business.fromEmail!, messageId, [b.business.fromEmail!])).status).toBe(200);
    expect(await inboundOf(a.business.id)).toHaveLength(1);
    expect(await inboundOf(b.business.id)).toHaveLength(1);
  });
});

describe('record mode cannot claim another business’s provider id', () => {
  it('a provider_message_id already used by another business is a 422 naming the item, and nothing is stored', async () => {
    const a = await restTenant();
    const b = await restTenant();
    const victim = await createConversation(b.business.id, (await createClient(b.business.id)).id);
    const sid = `SM${randomUUID().replaceAll('-', '')}`;
    await createMessage(victim, { provider: 'twilio', providerMessageId: sid, status: 'sent' });
    await createSmsNumber(a.business.id);
    const client = await createClient(a.business.id, { phoneNumber: '+14155550123' });
    const res = await postJson(`${a.base}/sms/record`, a.key, {
      sender_type: 'system',
      provider: 'twilio',
      messages: [{ client_id: client.id, message: 'mine now', provider_message_id: sid }],
    });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'messages', 0, 'provider_message_id']]);
    const rows = await db.select({ businessId: messages.businessId }).from(messages).where(eq(messages.providerMessageId, sid));
    expect(rows).toEqual([{ businessId: b.business.id }]);
  });
});

describe('status callbacks find their message only in the business that owns the sending number', () => {
  it('a callback naming a sid of business B but sent from business A’s number leaves B’s message untouched', async () => {
    const { postTwilio, TWILIO_PATHS, twilioSid } = await import('@/server/testing/webhooks');
    const a = await restTenant();
    const b = await restTenant();
    const aNumber = await createSmsNumber(a.business.id);
    const bNumber = await createSmsNumber(b.business.id);
    const conv = await createConversation(b.business.id, (await createClient(b.business.id)).id);
    const sid = twilioSid('SM');
    const msg = await createMessage(conv, { provider: 'twilio', providerMessageId: sid, status: 'sent' });
    const post = (from: string, status: string) =>
      postTwilio(TWILIO_PATHS.smsStatus, {
        MessageSid: sid,
        MessageStatus: status,
        AccountSid: 'AC1',
        From: from,
        To: '+14155550001',
      });
    expect((await post(aNumber.phoneNumber, 'failed')).status).toBe(200);
    const statusOf = async () =>
      (await db.select({ status: messages.status }).from(messages).where(eq(messages.id, msg.id)))[0]!.status;
    expect(await statusOf()).toBe('sent');
    expect((await post(bNumber.phoneNumber, 'delivered')).status).toBe(200);
    expect(await statusOf()).toBe('delivered');
  });
});

describe('SendGrid events are matched within the business named by their unique arguments', () => {
  it('an event whose smtp-id is business B’s Message-ID but names business A changes nothing at B', async () => {
    const { installSendgridKeyPair, sendgridRequest } = await import('@/server/testing/webhooks');
    const { api } = await import('@/server/testing/http');
    const keys = installSendgridKeyPair();
    const a = await restTenant();
    const b = await restTenant();
    const conv = await createConversation(b.business.id, (await createClient(b.business.id)).id);
    const mid = `<${randomUUID()}@studio.test>`;
    const msg = await createMessage(conv, {
      channel: 'email',
      messageType: 'EMAIL',
      provider: 'smtp',
      providerMessageId: mid,
      emailMessageId: mid,
      status: 'sent',
    });
    const post = (businessId: number) =>
      api.post(
        '/api/v1/email/webhooks/sendgrid',
        sendgridRequest(keys.privateKey, [
          { event: 'delivered', sg_event_id: randomUUID(), 'smtp-id': mid, business_id: String(businessId) },
        ]),
      );
    expect((await post(a.business.id)).status).toBe(200);
    const statusOf = async () =>
      (await db.select({ status: messages.status }).from(messages).where(eq(messages.id, msg.id)))[0]!.status;
    expect(await statusOf()).toBe('sent');
    expect((await post(b.business.id)).status).toBe(200);
    expect(await statusOf()).toBe('delivered');
  });
});

describe('inbound SMS is deduplicated per business', () => {
  it("a tenant that records another tenant's coming MessageSid first does not swallow that tenant's real text", async () => {
    const a = await restTenant();
    const b = await restTenant();
    const aNumber = (await createSmsNumber(a.business.id)).phoneNumber;
    await createSmsNumber(b.business.id);
    const sid = twilioSid('SM');
    // The attacker records the sid before Twilio delivers it (nobody has it yet, so it is accepted).
    const planted = await postJson(`${b.base}/sms/record`, b.key, {
      sender_type: 'system',
      provider: 'twilio',
      messages: [{ to_number: '+14155550199', message: 'planted', provider_message_id: sid, direction: 'inbound' }],
    });
    expect(planted.status).toBe(200);
    const res = await postTwilio(
      TWILIO_PATHS.smsIncoming,
      inboundSmsForm(aNumber, '+14155550198', 'Can I come at 3?', { MessageSid: sid }),
    );
    expect(res.status).toBe(200);
    const stored = await inboundOf(a.business.id);
    expect(stored).toHaveLength(1);
    // Delivered again, it is still one.
    await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(aNumber, '+14155550198', 'Can I come at 3?', { MessageSid: sid }));
    expect(await inboundOf(a.business.id)).toHaveLength(1);
  });
});
