import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { conversations, messages, optOuts } from '@/db/schema';
import { clientOptOuts, createClient, createConversation, createSmsNumber } from '@/server/testing/factories';
import { api, getJson, jsonOf, locsOf, restTenant } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';

/**
 * PUT and DELETE /businesses/{business_id}/clients/{client_id}/opt-outs/{channel} (docs/api.md#opt-out),
 * and the conversation list's `possible_opt_out` filter with its count (docs/api.md#possible-opt-outs).
 */
let counter = 0;
const newPhone = () => `+1332${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

async function setup() {
  const t = await restTenant();
  const number = await createSmsNumber(t.business.id);
  const optOutPath = (clientId: number, channel: string) => `${t.base}/clients/${clientId}/opt-outs/${channel}`;
  const put = (clientId: number, channel: string, headers = t.key) => api.put(optOutPath(clientId, channel), { headers });
  const del = (clientId: number, channel: string, headers = t.key) => api.delete(optOutPath(clientId, channel), { headers });
  const send = async (channel: 'sms' | 'email', clientId: number) => {
    const res = await api.post(`${t.base}/${channel}`, {
      headers: t.key,
      body: {
        sender_type: 'staff',
        messages: [
          channel === 'sms' ? { client_id: clientId, message: 'Hi' } : { client_id: clientId, subject: 'Hi', message: 'Hi' },
        ],
      },
    });
    const [id] = (await jsonOf(res)).message_ids as number[];
    return (await db.select().from(messages).where(eq(messages.id, id!)))[0]!;
  };
  return { ...t, number, put, del, send };
}

describe('PUT/DELETE …/clients/{client_id}/opt-outs/{channel}', () => {
  it('PUT opts the address out (source api) for every client row with it, DELETE opts it back in; both idempotent', async () => {
    const t = await setup();
    const phone = newPhone();
    const client = await createClient(t.business.id, { phoneNumber: phone });
    const sibling = await createClient(t.business.id, { phoneNumber: phone });

    const res = await t.put(client.id, 'sms');
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ client_id: client.id, opted_out_sms: true, opted_out_email: false });
    expect((await t.put(client.id, 'sms')).status).toBe(200);
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([
      expect.objectContaining({ channel: 'sms', address: phone, source: 'api', messageId: null }),
    ]);
    expect(await t.send('sms', sibling.id)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
    expect(await t.send('email', sibling.id)).toMatchObject({ status: 'queued' });

    const back = await t.del(sibling.id, 'sms');
    expect(back.status).toBe(200);
    expect(await jsonOf(back)).toMatchObject({ client_id: sibling.id, opted_out_sms: false });
    expect((await t.del(sibling.id, 'sms')).status).toBe(200);
    expect(await clientOptOuts(client.id)).toEqual({ sms: false, email: false });
    expect(await t.send('sms', client.id)).toMatchObject({ status: 'queued', errorCode: null });
  });

  it('email: the address in any case is opted out and back in', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { email: `Pat.${++counter}@Example.test` });
    expect(await jsonOf(await t.put(client.id, 'email', t.session))).toMatchObject({
      opted_out_email: true,
      opted_out_sms: false,
    });
    expect(await t.send('email', client.id)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
    expect(await jsonOf(await t.del(client.id, 'email'))).toMatchObject({ opted_out_email: false });
  });

  it('another business’s client is 404; no such address is 422 at [path, channel]; an unknown channel is 422', async () => {
    const t = await setup();
    const other = await restTenant();
    const foreign = await createClient(other.business.id, { phoneNumber: newPhone() });
    for (const call of [t.put, t.del]) {
      expect((await call(foreign.id, 'sms')).status).toBe(404);
      expect((await call(foreign.id, 'sms', t.session)).status).toBe(404);
    }
    expect(await clientOptOuts(foreign.id)).toEqual({ sms: false, email: false });

    const noPhone = await createClient(t.business.id, { phoneNumber: null });
    const noEmail = await createClient(t.business.id, { email: null });
    for (const [res, id] of [
      [await t.put(noPhone.id, 'sms'), noPhone.id],
      [await t.del(noPhone.id, 'sms'), noPhone.id],
      [await t.put(noEmail.id, 'email'), noEmail.id],
    ] as const) {
      expect(res.status, String(id)).toBe(422);
      expect(await locsOf(res)).toEqual([['path', 'channel']]);
    }
    const voice = await t.put(noEmail.id, 'voice');
    expect(voice.status).toBe(422);
    expect(await locsOf(voice)).toEqual([['path', 'channel']]);
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([]);
  });

  it('opting the number out (or in) settles a possible opt-out pending on the client’s conversation', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(
      TWILIO_PATHS.smsIncoming,
      inboundSmsForm(t.number.phoneNumber, client.phoneNumber!, 'please stop texting me'),
    );
    const pending = async () =>
      (await db.select().from(conversations).where(eq(conversations.clientId, client.id)))[0]!.possibleOptOutMessageId;
    expect(await pending()).not.toBeNull();
    // Email says nothing about texts.
    await t.put(client.id, 'email');
    expect(await pending()).not.toBeNull();
    expect(await jsonOf(await t.put(client.id, 'sms'))).toMatchObject({ possible_opt_out_message_id: null, opted_out_sms: true });
  });
});

describe('GET …/conversations?possible_opt_out= and the filters count', () => {
  it('true lists the conversations with a pending possible opt-out, false the others; the count matches', async () => {
    const t = await setup();
    const ids: number[] = [];
    for (const body of ['please stop texting me', 'See you at 3', 'no más mensajes']) {
      const client = await createClient(t.business.id, { phoneNumber: newPhone() });
      await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(t.number.phoneNumber, client.phoneNumber!, body));
      ids.push((await db.select().from(conversations).where(eq(conversations.clientId, client.id)))[0]!.id);
    }
    const quiet = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const list = async (q: string) => {
      const res = await getJson(`${t.base}/conversations?${q}`, t.key);
      expect(res.status, q).toBe(200);
      return (res.body.conversations as { conversation_id: number; possible_opt_out_message_id: number | null }[])
        .map((c) => c.conversation_id)
        .sort((a, b) => a - b);
    };
    expect(await list('possible_opt_out=true')).toEqual([ids[0], ids[2]].sort((a, b) => a! - b!));
    expect(await list('possible_opt_out=false')).toEqual([ids[1], quiet.id].sort((a, b) => a! - b!));
    const filters = await getJson(`${t.base}/conversations/filters`, t.key);
    expect(filters.body.possible_opt_out).toBe(2);

    const row = (await getJson(`${t.base}/conversations?possible_opt_out=true`, t.key)).body.conversations[0];
    const [flagged] = await db.select().from(messages).where(eq(messages.id, row.possible_opt_out_message_id));
    expect(flagged).toMatchObject({ conversationId: row.conversation_id, flagged: true, direction: 'inbound' });

    const bad = await api.get(`${t.base}/conversations?possible_opt_out=maybe`, { headers: t.key });
    expect(bad.status).toBe(422);
    expect(await locsOf(bad)).toEqual([['query', 'possible_opt_out']]);
  });
});
