import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businessEmailSenders, businessSmsNumbers, messages } from '@/db/schema';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { locs, postJson, restTenant } from '@/server/testing/http';

/**
 * Written as the attack: business A sends from business B's Twilio number or B's sender address.
 * Replies would land in B's inbox and a STOP would opt the client out at B. Refused with a 422
 * naming the field, and nothing is stored or queued.
 */
const storedFor = async (businessId: number) =>
  (await db.select({ n: count() }).from(messages).where(eq(messages.businessId, businessId)))[0]!.n;

describe('senders belong to the business', () => {
  it("from_number of another business is a 422 on send and on record; the business's own number works", async () => {
    const a = await restTenant();
    const b = await restTenant();
    const own = await createSmsNumber(a.business.id);
    const theirs = await createSmsNumber(b.business.id);
    const client = await createClient(a.business.id, { phoneNumber: '+14155550123' });
    for (const path of ['sms', 'sms/record']) {
      const res = await postJson(`${a.base}/${path}`, a.key, {
        sender_type: 'system',
        from_number: theirs.phoneNumber,
        messages: [{ client_id: client.id, message: 'Hi' }],
      });
      expect(res.status, path).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'from_number']]);
    }
    expect(await storedFor(a.business.id)).toBe(0);
    const ok = await postJson(`${a.base}/sms`, a.key, {
      sender_type: 'system',
      from_number: own.phoneNumber,
      messages: [{ client_id: client.id, message: 'Hi' }],
    });
    expect(ok.status).toBe(200);
  });

  it('without from_number the business default number sends; with no SMS number at all, a 422 on body.from_number and nothing stored', async () => {
    const a = await restTenant();
    const client = await createClient(a.business.id, { phoneNumber: '+14155550124' });
    const send = () =>
      postJson(`${a.base}/sms`, a.key, { sender_type: 'system', messages: [{ client_id: client.id, message: 'Hi' }] });
    await db.delete(businessSmsNumbers).where(eq(businessSmsNumbers.businessId, a.business.id));
    const none = await send();
    expect(none.status).toBe(422);
    expect(locs(none.body)).toEqual([['body', 'from_number']]);
    expect(await storedFor(a.business.id)).toBe(0);
    const own = await createSmsNumber(a.business.id);
    const ok = await send();
    expect(ok.status).toBe(200);
    const [stored] = await db.select().from(messages).where(eq(messages.businessId, a.business.id));
    expect(stored!.fromAddress).toBe(own.phoneNumber);
  });

  it('from_email of another business (or any address it has not declared) is a 422; a declared sender works', async () => {
    const a = await restTenant();
    const b = await restTenant();
    const client = await createClient(a.business.id, { email: 'ava@example.com' });
    const send = (from_email: string) =>
      postJson(`${a.base}/email`, a.key, {
        sender_type: 'system',
        from_email,
        messages: [{ client_id: client.id, subject: 'Hi', message: 'Hello' }],
      });
    for (const from of [b.business.fromEmail!, 'anyone@elsewhere.test']) {
      const res = await send(from);
      expect(res.status, from).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'from_email']]);
    }
    expect(await storedFor(a.business.id)).toBe(0);
    expect((await send(a.business.fromEmail!.toUpperCase())).status).toBe(200);
    await db.insert(businessEmailSenders).values({ businessId: a.business.id, email: 'Bookings@Studio.test' });
    expect((await send('bookings@studio.test')).status).toBe(200);
  });
});
