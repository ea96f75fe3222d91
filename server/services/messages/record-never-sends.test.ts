import { randomBytes } from 'node:crypto';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { createClient, createConversation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { api, jsonOf, locsOf } from '@/server/testing/http';
import { messageCount } from '@/server/testing/messages';
import { fakeProvidersEnv, startSmtpSink, type SmtpSink } from '@/server/testing/smtp-sink';
import { postTwilio, TWILIO_PATHS, twilioSid } from '@/server/testing/webhooks';
import { startWorker } from '@/workers/index';

/**
 * docs/api.md#record-mode: a recorded message is never sent. Each attack of issue 32 replayed as it
 * was (record `queued`/`sending`, record `initiated` then report `queued`, report a status for a
 * scheduled message), and then the construction that makes it impossible whatever a recorded row's
 * status says: the real worker, with its recovery sweep shortened to seconds, runs against the fake
 * Twilio API and the SMTP sink, and nothing recorded reaches either, while an orphaned message of
 * the send path is found and sent by the same sweep (so the sweep demonstrably ran).
 *
 * env() reads process.env once: the fakes start first and process.env points at them before
 * anything touches the database.
 */
Object.assign(process.env, { RECOVERY_SWEEP_INTERVAL_SECONDS: '1', RECOVERY_ORPHANED_SEND_SECONDS: '1' });

let fake: FakeTwilio;
let sink: SmtpSink;
let t: Awaited<ReturnType<typeof createTenant>>;
let fromNumber: string;
const run = randomBytes(4).toString('hex');
let phoneCounter = 0;
const newPhone = () => `+1415${String(3_100_000 + (Date.now() % 100_000) + ++phoneCounter).slice(-7)}`;

beforeAll(async () => {
  fake = await startFakeTwilio();
  sink = await startSmtpSink();
  Object.assign(process.env, fakeProvidersEnv(fake, sink));
  t = await createTenant();
  fromNumber = (await createSmsNumber(t.business.id)).phoneNumber;
  await db.execute(sql`update businesses set from_email = 'desk@salon.example' where id = ${t.business.id}`);
});
afterAll(async () => {
  await fake?.close();
  await sink?.close();
});

const headers = () => ({ 'x-api-key': t.apiKey });
const post = (path: string, body: unknown) =>
  api.post(`/api/v1/businesses/${t.business.id}${path}`, { headers: headers(), body });
const rowOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const toFake = (to: string) => fake.messages.filter((m) => m.to === to);
const toSink = (subject: string) => sink.messages.filter((m) => m.parsed.subject === subject);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('record mode refuses what would describe a send in progress (422, nothing stored)', () => {
  it.each([
    ['/sms/record', 'queued'],
    ['/sms/record', 'sending'],
    ['/email/record', 'queued'],
    ['/email/record', 'sending'],
  ])('%s with an item status %s', async (path, status) => {
    const before = await messageCount(t.business.id);
    const item = path.startsWith('/sms')
      ? { message: `Mirror ${run}`, to_number: newPhone(), status }
      : { message: `Mirror ${run}`, subject: `Mirror ${run}`, to_email: `x-${run}@client.example`, status };
    const res = await post(path, { sender_type: 'system', messages: [{ ...item, status: 'sent' }, item] });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 1, 'status']]);
    expect(await messageCount(t.business.id)).toBe(before);
  });

  it('the any-channel door in record mode refuses queued too', async () => {
    const res = await api.post(`/api/v1/messages/${t.business.id}`, {
      headers: headers(),
      body: {
        channel: 'sms',
        mode: 'record',
        sender_type: 'system',
        messages: [{ message: 'x', to_number: newPhone(), status: 'queued' }],
      },
    });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'status']]);
  });
});

describe('the status endpoints never hand a message to a send worker', () => {
  it.each(['queued', 'sending'])(
    'a recorded initiated SMS reported %s: 422 on body.status, the message stays initiated',
    async (status) => {
      const recorded = await jsonOf(
        await post('/sms/record', {
          sender_type: 'system',
          messages: [{ message: `Held ${run}`, to_number: newPhone(), status: 'initiated' }],
        }),
      );
      const id = recorded.message_ids[0];
      const res = await post('/sms/status', { message_id: id, status });
      expect(res.status).toBe(422);
      expect(await locsOf(res)).toEqual([['body', 'status']]);
      expect((await rowOf(id)).status).toBe('initiated');
      const email = await post('/email/status', { message_id: id, status });
      expect(email.status).toBe(422);
      expect(await locsOf(email)).toEqual([['body', 'status']]);
    },
  );

  it('a scheduled message is a 409 whatever the status reported; it stays scheduled and can still be canceled', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const queued = await jsonOf(
      await post('/sms', {
        sender_type: 'system',
        send_at: sendAt,
        messages: [{ message: `Later ${run}`, to_number: newPhone() }],
      }),
    );
    const id = queued.message_ids[0];
    expect((await rowOf(id)).status).toBe('scheduled');
    for (const status of ['sent', 'delivered', 'failed', 'canceled']) {
      const res = await post('/sms/status', { message_id: id, status });
      expect(res.status, status).toBe(409);
    }
    expect((await rowOf(id)).status).toBe('scheduled');
    const cancel = await post(`/messages/${id}/cancel`, {});
    expect(cancel.status).toBe(200);
    expect((await rowOf(id)).status).toBe('canceled');
  });
});

describe('by construction: the send claim and the recovery sweep take only what the product queued (real worker, fakes)', () => {
  it('recorded messages in flight by any route are never sent; an orphan of the send path is, by the same sweep', async () => {
    const client = await createClient(t.business.id, { phoneNumber: newPhone(), email: `c-${run}@client.example` });
    const conversation = await createConversation(t.business.id, client.id);

    // 1. Recorded initiated with Twilio's SID; Twilio's own callback for that SID says `queued`.
    const sid = twilioSid('SM');
    const viaCallbackTo = newPhone();
    const [viaCallback] = (
      await jsonOf(
        await post('/sms/record', {
          sender_type: 'system',
          provider: 'twilio',
          messages: [{ message: `Callback ${run}`, to_number: viaCallbackTo, status: 'initiated', provider_message_id: sid }],
        }),
      )
    ).message_ids;
    const callback = await postTwilio(
      TWILIO_PATHS.smsStatus,
      { MessageSid: sid, MessageStatus: 'queued', From: fromNumber, To: viaCallbackTo, AccountSid: fake.accountSid },
      { token: fake.authToken },
    );
    expect(callback.status).toBe(200);
    // Accepted, and ignored: a recorded message never reads as in flight.
    expect((await rowOf(viaCallback)).status).toBe('initiated');

    // 2. Recorded rows that read `queued` / `sending` (as rows recorded before the status rule did),
    //    an SMS and an email, long past the sweep's threshold, with no job.
    const oldSmsTo = newPhone();
    const oldSms = await createMessage(conversation, {
      origin: 'record',
      status: 'sending',
      toAddress: oldSmsTo,
      fromAddress: fromNumber,
      providerMessageId: null,
      content: `Old sending ${run}`,
    });
    const emailSubject = `Old queued ${run}`;
    const oldEmail = await createMessage(conversation, {
      origin: 'record',
      channel: 'email',
      messageType: 'EMAIL',
      status: 'queued',
      subject: emailSubject,
      toAddress: client.email!,
      fromAddress: 'desk@salon.example',
      providerMessageId: null,
      content: 'Mirrored elsewhere',
    });
    // 3. A stray send job naming a recorded queued message: the claim refuses it too.
    const strayTo = newPhone();
    const stray = await createMessage(conversation, {
      origin: 'record',
      status: 'queued',
      toAddress: strayTo,
      fromAddress: fromNumber,
      providerMessageId: null,
      content: `Stray ${run}`,
    });
    await enqueue(db, QUEUES.smsSend, [{ data: { messageId: stray.id, businessId: t.business.id } }]);

    // The control: a message the send path queued whose job is gone, the sweep's own case.
    const orphanTo = newPhone();
    const orphan = await createMessage(conversation, {
      origin: 'send',
      status: 'queued',
      attempts: 1,
      toAddress: orphanTo,
      fromAddress: fromNumber,
      providerMessageId: null,
      content: `Orphan ${run}`,
    });

    const recordedIds = [viaCallback!, oldSms.id, oldEmail.id, stray.id];
    await db
      .update(messages)
      .set({ statusUpdatedAt: sql`now() - interval '5 minutes'` })
      .where(inArray(messages.id, [...recordedIds, orphan.id]));

    const worker = await startWorker();
    try {
      await until('the sweep to send the orphan', async () => toFake(orphanTo).length === 1);
      // Three more sweeps (one a second) and the stray job's fetch have had their chance.
      await sleep(3_500);
    } finally {
      await worker.stop();
    }
    expect(toFake(orphanTo)).toHaveLength(1);
    expect((await rowOf(orphan.id)).status).toBe('sent');
    for (const to of [viaCallbackTo, oldSmsTo, strayTo]) expect(toFake(to), to).toEqual([]);
    expect(toSink(emailSubject)).toEqual([]);
    const after = await db.select().from(messages).where(inArray(messages.id, recordedIds)).orderBy(messages.id);
    expect(after.map((m) => [m.id, m.status, m.origin])).toEqual([
      [viaCallback, 'initiated', 'record'],
      [oldSms.id, 'sending', 'record'],
      [oldEmail.id, 'queued', 'record'],
      [stray.id, 'queued', 'record'],
    ]);
  });

  it('a recorded failed message retried on purpose is a send: its origin becomes send and it goes once', async () => {
    const to = newPhone();
    const body = `Retry me ${run}`;
    const [id] = (
      await jsonOf(
        await post('/sms/record', { sender_type: 'system', messages: [{ message: body, to_number: to, status: 'failed' }] }),
      )
    ).message_ids;
    const retry = await api.post(`/api/v1/messages/${t.business.id}/retry`, { headers: headers(), body: { message_ids: [id] } });
    expect(retry.status).toBe(200);
    expect(await rowOf(id)).toMatchObject({ status: 'queued', origin: 'send', attempts: 1 });
    const worker = await startWorker();
    try {
      await until('the retried message to be sent', async () => (await rowOf(id)).status === 'sent');
    } finally {
      await worker.stop();
    }
    expect(toFake(to).map((m) => m.body)).toEqual([body]);
  });
});
