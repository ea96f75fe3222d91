import { and, desc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, clients, messages, optOutEvents, optOuts } from '@/db/schema';
import {
  clientOptOuts,
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createTenant,
} from '@/server/testing/factories';
import { api, getJson, jsonOf } from '@/server/testing/http';
import { sendJobsFor } from '@/server/testing/send-jobs';
import { callStatus, newCall } from '@/server/testing/voice';
import { inboundSmsForm, jobsWhere, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { recordSendResults } from './lifecycle';
import { isSuppressed, optIn, optOut } from './suppression';

/**
 * Opt-outs by business and address (docs/api.md#opt-out): whichever client row opted out, every
 * row with that number or email address is suppressed, on every send path.
 */
let counter = 0;
const newPhone = () => `+1917${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

async function tenantWithNumber() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const headers = { 'x-api-key': t.apiKey };
  const send = (channel: 'sms' | 'email', items: Record<string, unknown>[]) =>
    api.post(`/api/v1/businesses/${t.business.id}/${channel}`, { headers, body: { sender_type: 'staff', messages: items } });
  return { ...t, number, headers, send };
}

const inboundSms = (to: string, from: string, body: string) =>
  postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(to, from, body));

const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const idsOf = async (res: Response) => {
  expect(res.status).toBe(200);
  return (await jsonOf(res)).message_ids as number[];
};
const optOutRows = (businessId: number) => db.select().from(optOuts).where(eq(optOuts.businessId, businessId));

describe('opt-outs by number', () => {
  it('a STOP from a number shared by two client rows suppresses both, through REST; START lets it be texted again', async () => {
    const t = await tenantWithNumber();
    const phone = newPhone();
    const parent = await createClient(t.business.id, { phoneNumber: phone });
    const child = await createClient(t.business.id, { phoneNumber: phone });

    expect((await inboundSms(t.number.phoneNumber, phone, 'STOP')).status).toBe(200);
    const [stop] = await db
      .select()
      .from(messages)
      .where(and(eq(messages.businessId, t.business.id), eq(messages.direction, 'inbound')));
    expect(stop!.clientId).toBe(parent.id); // the oldest row with the number gets the inbound message
    expect(await optOutRows(t.business.id)).toEqual([
      expect.objectContaining({ channel: 'sms', address: phone, source: 'keyword', messageId: stop!.id }),
    ]);

    // Every row with the number is opted out, by client id or by number; nothing is queued.
    const ids = await idsOf(
      await t.send('sms', [
        { client_id: child.id, message: 'Reminder' },
        { to_number: phone, message: 'Reminder' },
        { client_id: parent.id, message: 'Reminder' },
      ]),
    );
    for (const id of ids) {
      expect(await messageOf(id)).toMatchObject({ status: 'failed', errorCode: 'opted_out', toAddress: phone });
      expect(await sendJobsFor([id])).toEqual([]);
    }
    // The API and the inbox show both rows opted out.
    expect(await clientOptOuts(child.id)).toEqual({ sms: true, email: false });
    const list = await getJson(`/api/v1/businesses/${t.business.id}/clients`, t.headers);
    const shown = (list.body as { clients: { client_id: number; opted_out_sms: boolean }[] }).clients.filter((c) =>
      [parent.id, child.id].includes(c.client_id),
    );
    expect(shown.map((c) => c.opted_out_sms)).toEqual([true, true]);

    expect((await inboundSms(t.number.phoneNumber, phone, 'START')).status).toBe(200);
    expect(await optOutRows(t.business.id)).toEqual([]);
    const [again] = await idsOf(await t.send('sms', [{ client_id: child.id, message: 'Welcome back' }]));
    expect(await messageOf(again!)).toMatchObject({ status: 'queued', errorCode: null });
    expect(await jobsWhere('sms.send', 'messageId', again!)).toHaveLength(1);
  });

  it('outlives the client whose message caused it (message_id set null), and stays inside its business', async () => {
    const t = await tenantWithNumber();
    const other = await createTenant();
    const phone = newPhone();
    const first = await createClient(t.business.id, { phoneNumber: phone });
    const second = await createClient(t.business.id, { phoneNumber: phone });
    await inboundSms(t.number.phoneNumber, phone, 'STOP');
    await db.delete(clients).where(eq(clients.id, first.id));
    expect(await optOutRows(t.business.id)).toEqual([expect.objectContaining({ address: phone, messageId: null })]);
    expect(await clientOptOuts(second.id)).toEqual({ sms: true, email: false });
    // Another business's customer with the same number is not suppressed there.
    expect(await isSuppressed({ businessId: other.business.id, channel: 'sms', address: phone })).toBe(false);

    // message_id refers to a message of the same business only.
    const foreign = await createMessage(await createConversation(other.business.id, (await createClient(other.business.id)).id));
    await expect(
      optOut({ businessId: t.business.id, channel: 'sms', address: newPhone(), source: 'api', messageId: foreign.id }, db),
    ).rejects.toMatchObject({ cause: { code: '23503' } });
  });

  it('Twilio 21610 opts out the number the message went to, for every row with it', async () => {
    const t = await tenantWithNumber();
    const phone = newPhone();
    const a = await createClient(t.business.id, { phoneNumber: phone });
    const b = await createClient(t.business.id, { phoneNumber: phone });
    const refused = await createMessage(await createConversation(t.business.id, a.id), {
      channel: 'sms',
      messageType: 'TEXT',
      toAddress: phone,
      status: 'sending',
      providerMessageId: null,
    });
    await recordSendResults('twilio', {
      sent: [],
      failed: [{ messageId: refused.id, code: '21610', message: 'Attempt to send to unsubscribed recipient', optedOut: true }],
      requeue: [],
    });
    expect(await optOutRows(t.business.id)).toEqual([
      expect.objectContaining({ channel: 'sms', address: phone, source: 'provider_error', messageId: refused.id }),
    ]);
    const [id] = await idsOf(await t.send('sms', [{ client_id: b.id, message: 'Hi' }]));
    expect(await messageOf(id!)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
  });
  it('the missed-call text to an opted-out number is stored failed (opted_out) and not queued', async () => {
    const t = await tenantWithNumber();
    await db
      .update(businesses)
      .set({ settings: { missed_call_text: 'Sorry we missed your call!' } })
      .where(eq(businesses.id, t.business.id));
    const phone = newPhone();
    await createClient(t.business.id, { phoneNumber: phone });
    await createClient(t.business.id, { phoneNumber: phone });
    await optOut({ businessId: t.business.id, channel: 'sms', address: phone, source: 'keyword' }, db);
    expect((await callStatus({ ...newCall(phone, t.number.phoneNumber) }, 'no-answer')).status).toBe(200);
    const texts = await db
      .select()
      .from(messages)
      .where(and(eq(messages.businessId, t.business.id), eq(messages.messageType, 'TEXT')));
    expect(texts).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'opted_out', toAddress: phone })]);
    expect(await jobsWhere('sms.send', 'messageId', texts[0]!.id)).toHaveLength(0);
  });
});

describe('opt-outs by email address', () => {
  it('an address opted out on one row (any case) suppresses every row with it; other channels and addresses are untouched', async () => {
    const t = await tenantWithNumber();
    const tag = `${Date.now()}.${++counter}`;
    const a = await createClient(t.business.id, { email: `Pat.${tag}@Example.test` });
    const b = await createClient(t.business.id, { email: `pat.${tag}@example.test` });
    const unrelated = await createClient(t.business.id, { email: `sam.${tag}@example.test` });
    const bounced = await createMessage(await createConversation(t.business.id, a.id), {
      channel: 'email',
      messageType: 'EMAIL',
      toAddress: a.email,
      status: 'sending',
      providerMessageId: null,
    });
    await recordSendResults('smtp', {
      sent: [],
      failed: [{ messageId: bounced.id, code: 'unsubscribed', message: 'The address unsubscribed', optedOut: true }],
      requeue: [],
    });
    expect(await optOutRows(t.business.id)).toEqual([
      expect.objectContaining({ channel: 'email', address: `pat.${tag}@example.test`, source: 'provider_error' }),
    ]);
    const ids = await idsOf(
      await t.send('email', [
        { client_id: b.id, subject: 'Hi', message: 'Hello' },
        { to_email: `PAT.${tag}@EXAMPLE.test`, subject: 'Hi', message: 'Hello' },
        { client_id: unrelated.id, subject: 'Hi', message: 'Hello' },
      ]),
    );
    const rows = await Promise.all(ids.map(messageOf));
    expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
      ['failed', 'opted_out'],
      ['failed', 'opted_out'],
      ['queued', null],
    ]);
    expect(await clientOptOuts(b.id)).toEqual({ sms: false, email: true });
    // SMS to the same clients is not affected.
    const [sms] = await idsOf(await t.send('sms', [{ client_id: b.id, message: 'Hi' }]));
    expect((await messageOf(sms!)).status).toBe('queued');
  });
});

describe('the history and the current state (docs/api.md#opt-out)', () => {
  const events = (businessId: number) =>
    db
      .select({ address: optOutEvents.address, action: optOutEvents.action, source: optOutEvents.source })
      .from(optOutEvents)
      .where(eq(optOutEvents.businessId, businessId))
      .orderBy(optOutEvents.id);

  it('STOP, STOP, START, START, STOP: each change recorded once, and the latest record decides every send', async () => {
    const t = await tenantWithNumber();
    const phone = newPhone();
    const client = await createClient(t.business.id, { phoneNumber: phone });
    const sendOne = async () => messageOf((await idsOf(await t.send('sms', [{ client_id: client.id, message: 'Hi' }])))[0]!);
    for (const [word, optedOut] of [
      ['STOP', true],
      ['STOP', true],
      ['START', false],
      ['START', false],
      ['STOP', true],
    ] as const) {
      expect((await inboundSms(t.number.phoneNumber, phone, word)).status).toBe(200);
      expect(await sendOne(), word).toMatchObject(optedOut ? { status: 'failed', errorCode: 'opted_out' } : { status: 'queued' });
    }
    expect(await events(t.business.id)).toEqual([
      { address: phone, action: 'opt_out', source: 'keyword' },
      { address: phone, action: 'opt_in', source: 'keyword' },
      { address: phone, action: 'opt_out', source: 'keyword' },
    ]);
  });

  it('whatever the sequence of writes, an address has an opt_outs row exactly when its latest record is an opt-out', async () => {
    const t = await tenantWithNumber();
    const addresses = [newPhone(), newPhone(), newPhone()];
    const client = await createClient(t.business.id, { phoneNumber: addresses[0] });
    const refused = await createMessage(await createConversation(t.business.id, client.id), {
      toAddress: addresses[1],
      status: 'sending',
      providerMessageId: null,
    });
    // A fixed pseudo-random walk over every writer: keyword, staff, API, provider (21610), import-like.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 40; step++) {
      const address = addresses[Math.floor(random() * addresses.length)]!;
      const target = { businessId: t.business.id, channel: 'sms' as const, address };
      const roll = random();
      if (roll < 0.35) await optOut({ ...target, source: random() < 0.5 ? 'keyword' : 'staff', staffId: t.owner.id }, db);
      else if (roll < 0.45) {
        await db.update(messages).set({ status: 'sending' }).where(eq(messages.id, refused.id));
        await recordSendResults('twilio', {
          sent: [],
          failed: [{ messageId: refused.id, code: '21610', message: 'Unsubscribed recipient', optedOut: true }],
          requeue: [],
        });
      } else await optIn({ ...target, source: random() < 0.5 ? 'keyword' : 'phone_call', note: 'asked' }, db);
      const mismatched = await db.execute(sql`
        select a.address from unnest(${sql.param(addresses)}::text[]) as a(address)
        where exists (select 1 from opt_outs o where o.business_id = ${t.business.id} and o.channel = 'sms' and o.address = a.address)
          <> coalesce((select e.action = 'opt_out' from opt_out_events e
                       where e.business_id = ${t.business.id} and e.channel = 'sms' and e.address = a.address
                       order by e.id desc limit 1), false)`);
      expect(mismatched, `step ${step}`).toEqual([]);
      // And the send path's check (the workers' suppressedSql, submit's suppressedAddresses) agrees.
      const suppressed = await isSuppressed(target);
      const [latest] = await db
        .select({ action: optOutEvents.action })
        .from(optOutEvents)
        .where(and(eq(optOutEvents.businessId, t.business.id), eq(optOutEvents.address, address)))
        .orderBy(desc(optOutEvents.id))
        .limit(1);
      expect(suppressed, `step ${step}`).toBe(latest?.action === 'opt_out');
    }
    // Records only for changes: no two records of an address in a row say the same thing.
    const all = await events(t.business.id);
    for (const address of addresses) {
      const actions = all.filter((e) => e.address === address).map((e) => e.action);
      expect(
        actions.every((a, i) => i === 0 || a !== actions[i - 1]),
        address,
      ).toBe(true);
    }
  });
});
