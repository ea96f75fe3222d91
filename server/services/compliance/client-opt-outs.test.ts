import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages, optOutEvents, optOuts } from '@/db/schema';
import { clientOptOuts, createClient, createConversation, createSmsNumber, createStaff } from '@/server/testing/factories';
import { api, getJson, jsonOf, locsOf, postJson, restTenant, type Headers } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { optOut } from '@/server/services/messages/suppression';

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
  const del = (clientId: number, channel: string, headers = t.key, body?: Record<string, unknown>) =>
    api.delete(optOutPath(clientId, channel), { headers, body });
  const history = async (clientId: number, headers: Headers = t.key) => {
    const res = await getJson(`${t.base}/clients/${clientId}/opt-outs`, headers);
    expect(res.status).toBe(200);
    return res.body as {
      opted_out_sms: boolean;
      opted_out_email: boolean;
      history: {
        action: string;
        channel: string;
        source: string;
        note: string | null;
        staff_id: number | null;
        message_id: number | null;
      }[];
    };
  };
  /** The client texts `body` to the business's number, from their own number unless `from` is another. */
  const texts = async (client: { phoneNumber: string | null }, body: string, from = client.phoneNumber!) => {
    const form = inboundSmsForm(number.phoneNumber, from, body);
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, form)).status).toBe(200);
    return (await db.select().from(messages).where(eq(messages.providerMessageId, form.MessageSid!)))[0]!;
  };
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
  return { ...t, number, put, del, send, history, texts };
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

describe('opting back in is a record, and only the client lifts their own opt-out (docs/api.md#opt-out)', () => {
  const statement = { source: 'phone_call', note: 'Called the front desk: wants appointment reminders again' };

  it('the attack: a number that texted STOP is not re-subscribed by a bare DELETE from a key or a session; 422 says why', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const stop = await t.texts(client, 'STOP');
    for (const headers of [t.key, t.session]) {
      const res = await t.del(client.id, 'sms', headers);
      expect(res.status).toBe(422);
      const body = await jsonOf(res);
      expect(body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
        ['body', 'source'],
        ['body', 'note'],
      ]);
      expect(body.detail[0].msg).toContain(`${client.phoneNumber} is opted out of texts because the client texted "STOP"`);
      expect(body.detail[0].msg).toContain('they text START, UNSTOP or YES from that number');
      // Half a statement is not one either.
      const half = await t.del(client.id, 'sms', headers, { source: 'phone_call' });
      expect(await locsOf(half)).toEqual([['body', 'note']]);
      expect(await locsOf(await t.del(client.id, 'sms', headers, { note: 'they asked' }))).toEqual([['body', 'source']]);
    }
    // Still opted out, nothing recorded but the STOP, nothing sent.
    expect(await clientOptOuts(client.id)).toEqual({ sms: true, email: false });
    expect((await t.history(client.id)).history).toEqual([
      expect.objectContaining({ action: 'opt_out', source: 'keyword', message_id: stop.id, staff_id: null }),
    ]);
    expect(await t.send('sms', client.id)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
    // A marketing consent record does not lift it either (docs/api.md#consent).
    const consent = await postJson(`${t.base}/clients/${client.id}/consents`, t.key, {
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      source: 'web_form',
    });
    expect(consent.status).toBe(200);
    expect(await clientOptOuts(client.id)).toEqual({ sms: true, email: false });
    expect(await t.send('sms', client.id)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
  });

  it('a STOP that meets an opt-out set by hand makes it the client’s: a bare DELETE no longer lifts it', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    expect((await t.put(client.id, 'sms')).status).toBe(200);
    const stop = await t.texts(client, 'STOP');
    const res = await t.del(client.id, 'sms');
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([
      ['body', 'source'],
      ['body', 'note'],
    ]);
    expect(await clientOptOuts(client.id)).toEqual({ sms: true, email: false });
    expect((await t.history(client.id)).history).toEqual([
      expect.objectContaining({ action: 'opt_out', source: 'keyword', message_id: stop.id }),
      expect.objectContaining({ action: 'opt_out', source: 'api', message_id: null }),
    ]);
    // A second STOP adds nothing.
    await t.texts(client, 'STOP');
    expect((await t.history(client.id)).history).toHaveLength(2);
  });

  it('an explicit opt-in (source + note) lifts it and is recorded with who; the history shows both, newest first', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const stop = await t.texts(client, 'Stop texting me');
    const res = await t.del(client.id, 'sms', t.session, statement);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ opted_out_sms: false });
    expect(await t.send('sms', client.id)).toMatchObject({ status: 'queued' });

    const read = await t.history(client.id);
    expect(read).toMatchObject({ opted_out_sms: false, opted_out_email: false });
    expect(read.history).toEqual([
      expect.objectContaining({
        action: 'opt_in',
        channel: 'sms',
        source: 'phone_call',
        note: statement.note,
        staff_id: t.owner.id,
      }),
      expect.objectContaining({ action: 'opt_out', channel: 'sms', source: 'keyword', message_id: stop.id }),
    ]);
    // The opt-out record stays: no row of the history is ever deleted.
    expect(await db.select().from(optOutEvents).where(eq(optOutEvents.businessId, t.business.id))).toHaveLength(2);
    // Opting in again changes nothing and records nothing.
    expect((await t.del(client.id, 'sms', t.key)).status).toBe(200);
    expect((await t.history(client.id)).history).toHaveLength(2);
  });

  it('an API key may name the staff member who took the request; a session may name only itself', async () => {
    const t = await setup();
    const colleague = await createStaff(t.business.id);
    const other = await restTenant();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    await t.texts(client, 'UNSUBSCRIBE');
    const asColleague = await t.del(client.id, 'sms', t.session, { ...statement, staff_id: colleague.id });
    expect(asColleague.status).toBe(422);
    expect(await locsOf(asColleague)).toEqual([['body', 'staff_id']]);
    const foreignStaff = await t.del(client.id, 'sms', t.key, { ...statement, staff_id: other.owner.id });
    expect(await locsOf(foreignStaff)).toEqual([['body', 'staff_id']]);
    expect(await clientOptOuts(client.id)).toEqual({ sms: true, email: false });

    expect((await t.del(client.id, 'sms', t.session, { ...statement, staff_id: t.owner.id })).status).toBe(200);
    await t.texts(client, 'STOP');
    expect((await t.del(client.id, 'sms', t.key, { ...statement, staff_id: colleague.id })).status).toBe(200);
    expect((await t.history(client.id)).history.map((h) => [h.action, h.staff_id])).toEqual([
      ['opt_in', colleague.id],
      ['opt_out', null],
      ['opt_in', t.owner.id],
      ['opt_out', null],
    ]);
  });

  it('the client’s own START, UNSTOP or YES lifts it; the same word from another number does not', async () => {
    const t = await setup();
    for (const word of ['START', 'unstop', 'Yes']) {
      const client = await createClient(t.business.id, { phoneNumber: newPhone() });
      await t.texts(client, 'STOP');
      // The client's other phone (a new client row, as an unknown number becomes a lead) says START.
      await t.texts(client, word, newPhone());
      expect(await clientOptOuts(client.id), word).toEqual({ sms: true, email: false });
      const start = await t.texts(client, word);
      expect(await clientOptOuts(client.id), word).toEqual({ sms: false, email: false });
      expect((await t.history(client.id)).history[0], word).toMatchObject({
        action: 'opt_in',
        source: 'keyword',
        message_id: start.id,
        staff_id: null,
      });
    }
  });

  it('an opt-out set by hand is undone without a statement (recorded as such); a provider report or an import is not', async () => {
    const t = await setup();
    const client = await createClient(t.business.id, { phoneNumber: newPhone(), email: `pat.${++counter}@example.test` });
    expect((await t.put(client.id, 'sms', t.session)).status).toBe(200);
    expect((await t.del(client.id, 'sms', t.key, { note: 'Opted out by mistake' })).status).toBe(200);
    expect((await t.history(client.id)).history.map((h) => [h.action, h.source, h.staff_id, h.note])).toEqual([
      ['opt_in', 'api', null, 'Opted out by mistake'],
      ['opt_out', 'api', t.owner.id, null],
    ]);

    // A bounce or an unsubscribe reported by the provider is the address's own; so is an import's.
    for (const [source, why] of [
      ['provider_error', 'the email provider reported an unsubscribe'],
      ['import', 'an import marked it opted out'],
    ] as const) {
      await optOut({ businessId: t.business.id, channel: 'email', address: client.email!, source }, db);
      const email = await jsonOf(await t.del(client.id, 'email', t.key));
      expect(email.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
        ['body', 'source'],
        ['body', 'note'],
      ]);
      expect(email.detail[0].msg).toContain(why);
      expect(await clientOptOuts(client.id)).toEqual({ sms: false, email: true });
      expect((await t.del(client.id, 'email', t.key, { source: 'email', note: 'Wrote to us: please resume' })).status).toBe(200);
      expect(await clientOptOuts(client.id)).toEqual({ sms: false, email: false });
    }
  });

  it('GET …/opt-outs: another business’s client is 404; a client with nothing on record has an empty history', async () => {
    const t = await setup();
    const other = await restTenant();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    expect((await getJson(`${other.base}/clients/${client.id}/opt-outs`, other.key)).status).toBe(404);
    expect((await getJson(`${t.base}/clients/${client.id}/opt-outs`, other.key)).status).toBe(403);
    expect(await t.history(client.id, t.session)).toEqual({
      client_id: client.id,
      opted_out_sms: false,
      opted_out_email: false,
      history: [],
    });
    const bad = await t.del(client.id, 'sms', t.key, { source: 'carrier_pigeon', note: 'x'.repeat(2001) });
    expect(await locsOf(bad)).toEqual([
      ['body', 'source'],
      ['body', 'note'],
    ]);
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
