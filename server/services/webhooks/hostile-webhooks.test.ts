import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages, webhookEvents } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import { api } from '@/server/testing/http';
import {
  installSendgridKeyPair,
  multipartBody,
  postBytes,
  postTwilio,
  sendgridRequest,
  TWILIO_PATHS,
  twilioSid,
} from '@/server/testing/webhooks';

/**
 * The regression set of the hostile-input issue, webhook side: each request below once answered
 * 500 or cost the server far more than the sender. Signed and understood → 2xx, with the raw bytes
 * kept and the stored text cleaned; unsigned → 403 whatever the body; malformed → 4xx.
 */
const keys = installSendgridKeyPair();
const SENDGRID = '/api/v1/email/webhooks/sendgrid';
const INBOUND = '/api/v1/email/webhooks/sendgrid/inbound?secret=dev-inbound-secret';

const eventsWith = (dedupeKey: string) => db.select().from(webhookEvents).where(eq(webhookEvents.dedupeKey, dedupeKey));
const eventCount = async () => (await db.select({ n: count() }).from(webhookEvents))[0]!.n;

async function tenantWithNumber() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  return { ...t, number: number.phoneNumber };
}

describe('Twilio: text PostgreSQL cannot store, in signed parameters', () => {
  it.each([
    ['U+0000', 'Hi\u0000there'],
    ['a lone surrogate', 'Hi\ud800there'],
  ])('%s in an inbound SMS: 200, the message stored cleaned, the raw bytes kept', async (_, body) => {
    const t = await tenantWithNumber();
    const sid = twilioSid();
    const res = await postTwilio(TWILIO_PATHS.smsIncoming, {
      MessageSid: sid,
      AccountSid: 'AC1',
      From: '+14155550100',
      To: t.number,
      Body: body,
    });
    expect(res.status).toBe(200);
    const [event] = await eventsWith(sid);
    expect(event!.outcome).toBe('processed');
    if (body.includes('\u0000')) {
      // The exact bytes round-trip: the signed form as it was posted.
      expect(new URLSearchParams(event!.rawBody!.toString('utf8')).get('Body')).toBe(body);
    } else {
      // Form encoding has no way to carry a lone surrogate (it travels as U+FFFD): nothing was lost.
      expect(event!.rawBody).toBeNull();
    }
    const [stored] = await db.select().from(messages).where(eq(messages.providerMessageId, sid));
    expect(stored!.content).toBe('Hi\ufffdthere');
  });

  it('U+0000 in a status callback: 200 and the status applied', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const sid = twilioSid();
    await createMessage(conversation, { provider: 'twilio', providerMessageId: sid, status: 'sent' });
    const res = await postTwilio(TWILIO_PATHS.smsStatus, {
      MessageSid: sid,
      MessageStatus: 'delivered',
      AccountSid: 'AC1\u0000',
      From: t.number,
      To: '+14155550100',
    });
    expect(res.status).toBe(200);
    const [stored] = await db.select().from(messages).where(eq(messages.providerMessageId, sid));
    expect(stored!.status).toBe('delivered');
    const [event] = await db.select().from(webhookEvents).where(eq(webhookEvents.kind, 'sms_status'));
    expect((event!.payload as Record<string, string>).AccountSid).toBe('AC1\ufffd');
    expect(event!.rawBody).not.toBeNull();
  });

  it('an unsigned 1 MB body of repeated keys is refused at once, without parsing it', async () => {
    const body = 'a&'.repeat(512 * 1024);
    const started = performance.now();
    const res = await api.post(TWILIO_PATHS.smsStatus, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const ms = performance.now() - started;
    expect([403, 413]).toContain(res.status);
    expect(ms).toBeLessThan(50);
  });

  it('an unsigned 60 KB body of repeated keys (under the limit) is a 403 in linear time', async () => {
    const body = 'a&'.repeat(30 * 1024);
    const started = performance.now();
    const res = await api.post(TWILIO_PATHS.smsStatus, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    expect(res.status).toBe(403);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('SendGrid events', () => {
  const post = (events: unknown) => api.post(SENDGRID, sendgridRequest(keys.privateKey, events as unknown[]));

  it('an unsigned body of `[` is a 403, not a 400', async () => {
    const res = await api.post(SENDGRID, { headers: { 'content-type': 'application/json' }, body: '[' });
    expect(res.status).toBe(403);
  });

  it('a signed `[null]` is understood as one unusable event: 200, nothing stored', async () => {
    const before = await eventCount();
    const res = await post([null]);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: 1, stored: 0 });
    expect(await eventCount()).toBe(before);
  });

  it('a signed body that is not an array is a 422', async () => {
    const res = await api.post(SENDGRID, sendgridRequest(keys.privateKey, { event: 'open' } as never));
    expect(res.status).toBe(422);
  });

  it('U+0000 inside smtp-id and a 200,000-character email: 200, stored cleaned with the raw bytes', async () => {
    const sgEventId = `ev-${Date.now()}`;
    const res = await post([
      { event: 'delivered', sg_event_id: sgEventId, 'smtp-id': '<abc\u0000@x>', email: `${'a'.repeat(200_000)}@example.com` },
    ]);
    expect(res.status).toBe(200);
    const [event] = await eventsWith(sgEventId);
    expect((event!.payload as Record<string, string>)['smtp-id']).toBe('<abc\ufffd@x>');
    expect(event!.rawBody).not.toBeNull();
    expect(JSON.parse(event!.rawBody!.toString('utf8'))[0]['smtp-id']).toBe('<abc\u0000@x>');
  });

  it('a 100,000-character sg_event_id is still stored (the dedupe key is hashed past 200 characters)', async () => {
    const res = await post([{ event: 'delivered', sg_event_id: 'x'.repeat(100_000) }]);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ stored: 1 });
  });
});

describe('Inbound Parse', () => {
  it('a part whose Content-Disposition has an empty name is a 400, or ignored; never a 500', async () => {
    const boundary = 'XyZhostile';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name=""\r\n\r\nvalue\r\n--${boundary}\r\nContent-Disposition: form-data; name=\r\n\r\nx\r\n--${boundary}--\r\n`,
    );
    const res = await postBytes(INBOUND, { 'content-type': `multipart/form-data; boundary=${boundary}` }, body);
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBeGreaterThanOrEqual(200);
  });

  it('a truncated multipart body is a 400', async () => {
    const { contentType, bytes } = await multipartBody({ from: 'a@example.com', to: 'b@example.com', text: 'hello' });
    const res = await postBytes(INBOUND, { 'content-type': contentType }, bytes.subarray(0, bytes.length - 20));
    expect(res.status).toBe(400);
  });

  it('a wrong secret is a 403 before the body is read as multipart', async () => {
    const res = await postBytes(
      '/api/v1/email/webhooks/sendgrid/inbound?secret=wrong',
      { 'content-type': 'multipart/form-data; boundary=x' },
      Buffer.from('garbage'),
    );
    expect(res.status).toBe(403);
  });
});

describe('found by the webhook property suite', () => {
  it('a multipart body cut off inside a file part is a 400, with no uncaught error', async () => {
    const { contentType, bytes } = await multipartBody({ from: 'a@example.com', to: 'b@example.com' }, [
      { field: 'attachment1', filename: 'a.pdf', contentType: 'application/pdf', content: Buffer.alloc(5000, 1) },
    ]);
    const uncaught: unknown[] = [];
    const onError = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onError);
    try {
      const res = await postBytes(INBOUND, { 'content-type': contentType }, bytes.subarray(0, bytes.length - 2000));
      expect(res.status).toBe(400);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(uncaught).toEqual([]);
  });

  it('a caller identity past PostgreSQL integer is no staff member (Reject), not a 500', async () => {
    const res = await postTwilio('/api/v1/voice-calls/instructions', {
      CallSid: twilioSid('CA'),
      From: 'client:staff-99999999999',
      To: '+14155550123',
      AccountSid: 'AC1',
      CallStatus: 'ringing',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<Reject');
  });

  it('an out-of-range CallDuration or NumSegments is dropped, and the event is still processed', async () => {
    const t = await tenantWithNumber();
    const callSid = twilioSid('CA');
    const voice = await postTwilio(TWILIO_PATHS.voiceStatus, {
      CallSid: callSid,
      CallStatus: 'completed',
      CallDuration: '99999999999',
      From: '+14155550100',
      To: t.number,
      Direction: 'inbound',
      AccountSid: 'AC1',
    });
    expect(voice.status).toBe(200);
    expect((await eventsWith(`${callSid}:completed::`))[0]!.outcome).toBe('processed');
    const sid = twilioSid();
    const sms = await postTwilio(TWILIO_PATHS.smsIncoming, {
      MessageSid: sid,
      From: '+14155550100',
      To: t.number,
      Body: 'hi',
      NumSegments: '1e9',
      NumMedia: '99999999999',
      AccountSid: 'AC1',
    });
    expect(sms.status).toBe(200);
    expect((await eventsWith(sid))[0]!.outcome).toBe('processed');
  });
});
