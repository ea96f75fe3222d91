import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { consents, messages } from '@/db/schema';
import type { SendJob } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import { createTwilioProvider } from '@/server/providers/twilio';
import { createClient, createSmsNumber, createTenant } from '@/server/testing/factories';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { api, jsonOf, locsOf } from '@/server/testing/http';
import { messageCount } from '@/server/testing/messages';
import { sendSmsBatch } from '@/server/services/messages/send/sms';

/**
 * docs/api.md#sending-messages, #consent: consent, opt-outs and quiet hours follow the address a
 * message goes to. Issue 32's attack replayed: a campaign item `{client_id: A, to_number: X}` where
 * A consented and X did not (X nobody's number, or another client's) was sent to X on A's consent.
 * Now such an item is a 422 naming the field; and a marketing text needs its client's consent and
 * no withdrawal by any client of the business at that address, when queued and when sent (the
 * real send handler against the fake Twilio API).
 */
const log = logger.child({ test: 'destination' });
let fake: FakeTwilio;
let provider: ReturnType<typeof createTwilioProvider>;
let t: Awaited<ReturnType<typeof createTenant>>;
let n = 0;
const newPhone = () => `+1415${String(4_200_000 + (Date.now() % 100_000) + ++n).slice(-7)}`;

beforeAll(async () => {
  fake = await startFakeTwilio();
  provider = createTwilioProvider({
    accountSid: fake.accountSid,
    authToken: fake.authToken,
    apiBaseUrl: fake.url,
    timeoutMs: 2000,
  });
  t = await createTenant();
  await createSmsNumber(t.business.id);
});
afterAll(() => fake?.close());

const post = (path: string, body: unknown) =>
  api.post(`/api/v1/businesses/${t.business.id}${path}`, { headers: { 'x-api-key': t.apiKey }, body });
const campaign = (items: Record<string, unknown>[]) =>
  post('/sms', { sender_type: 'system', category: 'campaign', messages: items });
const rowOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const marketing = (clientId: number, channel: 'sms' | 'email', status: 'given' | 'withdrawn', minutesAgo = 60) =>
  db.insert(consents).values({
    businessId: t.business.id,
    clientId,
    channel,
    purpose: 'marketing',
    status,
    source: 'api',
    recordedAt: new Date(Date.now() - minutesAgo * 60_000),
  });
const job = (messageId: number) =>
  ({
    id: randomUUID(),
    name: 'sms.send',
    data: { messageId, businessId: t.business.id },
    retryCount: 0,
    retryLimit: 5,
  }) as unknown as PgBoss.JobWithMetadata<SendJob>;
const CALLBACK = 'http://localhost:3000/api/v1/webhooks/twilio/sms/status';

describe('a named client and another address (queue mode)', () => {
  it("the attack: A consented, X is nobody's number → 422 on messages[i].to_number, nothing stored, nothing sent", async () => {
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    await marketing(a.id, 'sms', 'given');
    const x = newPhone();
    const before = await messageCount(t.business.id);
    const res = await campaign([
      { client_id: a.id, message: 'Spring sale: 20% off color' },
      { client_id: a.id, to_number: x, message: 'Spring sale: 20% off color' },
    ]);
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 1, 'to_number']]);
    expect(await messageCount(t.business.id)).toBe(before);
    expect(fake.messages.filter((m) => m.to === x)).toEqual([]);
  });

  it("another client's number with A's id is a 422 too; A's own number (in any notation) is accepted", async () => {
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    const b = await createClient(t.business.id, { phoneNumber: newPhone() });
    const res = await post('/sms', {
      sender_type: 'system',
      messages: [{ client_id: a.id, to_number: b.phoneNumber, message: 'Hi' }],
    });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'to_number']]);
    const national = `(${a.phoneNumber!.slice(2, 5)}) ${a.phoneNumber!.slice(5, 8)}-${a.phoneNumber!.slice(8)}`;
    const own = await post('/sms', {
      sender_type: 'system',
      messages: [{ client_id: a.id, to_number: national, message: 'Hi' }],
    });
    expect(own.status).toBe(200);
    expect(await rowOf((await jsonOf(own)).message_ids[0])).toMatchObject({ clientId: a.id, toAddress: a.phoneNumber });
  });

  it("email: another address with the client's id → 422 on to_email; the client's own, in other case, is accepted", async () => {
    await db.execute(sql`update businesses set from_email = 'desk@salon.example' where id = ${t.business.id}`);
    const a = await createClient(t.business.id, { email: `ana-${n++}@client.example` });
    const body = (to: string) => ({
      sender_type: 'system',
      messages: [{ client_id: a.id, to_email: to, subject: 'Hi', message: 'Hi' }],
    });
    const res = await post('/email', body('someone@else.example'));
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'to_email']]);
    expect((await post('/email', body(a.email!.toUpperCase()))).status).toBe(200);
  });

  it('record mode files what it is given (history may predate a number change)', async () => {
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    const old = newPhone();
    const res = await post('/sms/record', {
      sender_type: 'system',
      messages: [{ client_id: a.id, to_number: old, message: 'Old' }],
    });
    expect(res.status).toBe(200);
    expect(await rowOf((await jsonOf(res)).message_ids[0])).toMatchObject({ clientId: a.id, toAddress: old, status: 'sent' });
  });
});

describe('marketing consent follows the destination address', () => {
  it('a marketing email goes to its client alone: cc or bcc → 422 on that field, nothing stored; a transactional one may copy', async () => {
    await db.execute(sql`update businesses set from_email = 'desk@salon.example' where id = ${t.business.id}`);
    const a = await createClient(t.business.id, { email: `mia-${n++}@client.example` });
    await marketing(a.id, 'email', 'given');
    const item = (copies: Record<string, string[]>) => ({ client_id: a.id, subject: 'Offer', message: '20% off', ...copies });
    const before = await messageCount(t.business.id);
    const cc = await post('/email', {
      sender_type: 'system',
      category: 'campaign',
      messages: [item({ cc_email: ['x@else.example'] })],
    });
    expect(cc.status).toBe(422);
    expect(await locsOf(cc)).toEqual([['body', 'messages', 0, 'cc_email']]);
    const bcc = await post('/email', {
      sender_type: 'system',
      notification_type: 'review_request',
      messages: [item({ cc_email: [], bcc_email: ['y@else.example'] })],
    });
    expect(await locsOf(bcc)).toEqual([['body', 'messages', 0, 'bcc_email']]);
    expect(await messageCount(t.business.id)).toBe(before);
    // Without copies the campaign is accepted; a transactional email may carry them.
    expect((await post('/email', { sender_type: 'system', category: 'campaign', messages: [item({})] })).status).toBe(200);
    expect((await post('/email', { sender_type: 'system', messages: [item({ cc_email: ['x@else.example'] })] })).status).toBe(
      200,
    );
  });

  it("queued: A's yes does not outweigh B's no at the same number (by client_id and by number); a number nobody withdrew goes", async () => {
    const shared = newPhone();
    const a = await createClient(t.business.id, { phoneNumber: shared });
    const b = await createClient(t.business.id, { phoneNumber: shared });
    await marketing(a.id, 'sms', 'given');
    await marketing(b.id, 'sms', 'withdrawn', 30);
    const c = await createClient(t.business.id, { phoneNumber: newPhone() });
    await marketing(c.id, 'sms', 'given');
    const ids = (
      await jsonOf(
        await campaign([
          { client_id: a.id, message: 'Sale' },
          { to_number: shared, message: 'Sale' },
          { client_id: c.id, message: 'Sale' },
        ]),
      )
    ).message_ids as number[];
    const rows = await Promise.all(ids.map(rowOf));
    expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
      ['failed', 'no_marketing_consent'],
      ['failed', 'no_marketing_consent'],
      ['queued', null],
    ]);
  });

  it("at send time: B withdraws at A's number after A's campaign text was queued → failed, nothing reaches Twilio", async () => {
    const shared = newPhone();
    const a = await createClient(t.business.id, { phoneNumber: shared });
    await marketing(a.id, 'sms', 'given');
    const [id] = (await jsonOf(await campaign([{ client_id: a.id, message: 'Sale' }]))).message_ids as number[];
    expect((await rowOf(id!)).status).toBe('queued');
    const b = await createClient(t.business.id, { phoneNumber: shared });
    await marketing(b.id, 'sms', 'withdrawn', 0);

    await sendSmsBatch([job(id!)], provider, CALLBACK, log);
    expect(await rowOf(id!)).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent', providerMessageId: null });
    expect(fake.messages.filter((m) => m.to === shared)).toEqual([]);

    // The control: with nobody's withdrawal at its number, the same kind of text is sent.
    const own = await createClient(t.business.id, { phoneNumber: newPhone() });
    await marketing(own.id, 'sms', 'given');
    const [sent] = (await jsonOf(await campaign([{ client_id: own.id, message: 'Sale' }]))).message_ids as number[];
    await sendSmsBatch([job(sent!)], provider, CALLBACK, log);
    expect((await rowOf(sent!)).status).toBe('sent');
    expect(fake.messages.filter((m) => m.to === own.phoneNumber)).toHaveLength(1);
  });

  it("by another route: a campaign recorded for A at X, then retried, is refused at send time (A's consent is not X's)", async () => {
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    await marketing(a.id, 'sms', 'given');
    const x = newPhone();
    const recorded = await post('/sms/record', {
      sender_type: 'system',
      category: 'campaign',
      messages: [{ client_id: a.id, to_number: x, message: 'Sale', status: 'failed' }],
    });
    const [id] = (await jsonOf(recorded)).message_ids as number[];
    const retry = await api.post(`/api/v1/messages/${t.business.id}/retry`, {
      headers: { 'x-api-key': t.apiKey },
      body: { message_ids: [id] },
    });
    expect(retry.status).toBe(200);
    await sendSmsBatch([job(id!)], provider, CALLBACK, log);
    expect(await rowOf(id!)).toMatchObject({ status: 'failed', errorCode: 'no_marketing_consent', providerMessageId: null });
    expect(fake.messages.filter((m) => m.to === x)).toEqual([]);
  });

  it('a withdrawal that a later given outranks (same client) no longer blocks', async () => {
    const shared = newPhone();
    const a = await createClient(t.business.id, { phoneNumber: shared });
    const b = await createClient(t.business.id, { phoneNumber: shared });
    await marketing(a.id, 'sms', 'given');
    await marketing(b.id, 'sms', 'withdrawn', 50);
    await marketing(b.id, 'sms', 'given', 40);
    const [id] = (await jsonOf(await campaign([{ client_id: a.id, message: 'Sale' }]))).message_ids as number[];
    expect((await rowOf(id!)).status).toBe('queued');
  });
});
