import { and, desc, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, conversations, messages, optOutEvents, optOuts } from '@/db/schema';
import { clientOptOuts, createClient, createSmsNumber, createTenant } from '@/server/testing/factories';
import { api, getJson, jsonOf, type Headers } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { holder, lockWaiters, untilBlockedBy } from '@/server/testing/locks';
import { flagMessage, markMessagesRead } from '@/server/services/conversations/messages';
import { decidePossibleOptOut } from './opt-out-review';

/**
 * Possible opt-outs (docs/api.md#possible-opt-outs): a likely opt-out text is left pending on its
 * conversation; the client's own STOP or START settles it; staff confirm (the number is opted out of
 * SMS) or dismiss (texts keep going), once, with a note saying who decided.
 */
let counter = 0;
const newPhone = () => `+1718${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

async function tenantWithClient() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  const key: Headers = { 'x-api-key': t.apiKey };
  const session: Headers = { authorization: `Bearer ${t.sessionToken}` };
  const texts = async (body: string) => {
    const params = inboundSmsForm(number.phoneNumber, client.phoneNumber!, body);
    expect((await postTwilio(TWILIO_PATHS.smsIncoming, params)).status).toBe(200);
    const [m] = await db.select().from(messages).where(eq(messages.providerMessageId, params.MessageSid!));
    return m!;
  };
  const conversation = async () => (await db.select().from(conversations).where(eq(conversations.clientId, client.id)))[0]!;
  const decide = (conversationId: number, body: Record<string, unknown>, headers: Headers = session) =>
    api.post(`/api/v1/businesses/${t.business.id}/conversations/${conversationId}/possible-opt-out`, { headers, body });
  const sendSms = async (clientId: number) => {
    const res = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers: key,
      body: { sender_type: 'staff', messages: [{ message: 'Your appointment is tomorrow', client_id: clientId }] },
    });
    expect(res.status).toBe(200);
    const [id] = (await jsonOf(res)).message_ids as number[];
    return (await db.select().from(messages).where(eq(messages.id, id!)))[0]!;
  };
  const notes = () =>
    db
      .select({ content: messages.content, staffId: messages.staffId })
      .from(messages)
      .where(and(eq(messages.businessId, t.business.id), eq(messages.messageType, 'NOTE')))
      .orderBy(desc(messages.id));
  return { ...t, number, client, key, session, texts, conversation, decide, sendSms, notes };
}

describe('the inbound path', () => {
  it('a likely opt-out becomes the pending one (the newest wins), shown in details and counted in filters', async () => {
    const t = await tenantWithClient();
    const first = await t.texts('please stop texting me');
    expect(await t.conversation()).toMatchObject({ possibleOptOutMessageId: first.id, flaggedCount: 1 });
    const ordinary = await t.texts('See you at 3');
    expect(ordinary.flagged).toBe(false);
    expect((await t.conversation()).possibleOptOutMessageId).toBe(first.id);
    const second = await t.texts('no más mensajes');
    expect(await t.conversation()).toMatchObject({ possibleOptOutMessageId: second.id, flaggedCount: 2 });

    const client = await getJson(`/api/v1/businesses/${t.business.id}/clients/${t.client.id}`, t.key);
    expect(client.body.possible_opt_out_message_id).toBe(second.id);
    // Not opted out: staff decide.
    expect(await clientOptOuts(t.client.id)).toEqual({ sms: false, email: false });
  });

  it("the client's own STOP clears it (and opts out); so does START", async () => {
    for (const word of ['Stop texting me', 'START']) {
      const t = await tenantWithClient();
      await t.texts('please stop texting me');
      await t.texts(word);
      expect((await t.conversation()).possibleOptOutMessageId, word).toBeNull();
      expect((await clientOptOuts(t.client.id)).sms, word).toBe(word !== 'START');
    }
  });
});

describe('staff deciding', () => {
  // The decision locks the conversation, then its opt-out row names the text (a foreign key: a
  // KEY SHARE lock on the message). Flagging or reading that text locks the message, then updates
  // the conversation. With FOR UPDATE on the message the two deadlocked (seen as a 500 in
  // counts.test.ts); FOR NO KEY UPDATE does not conflict with the key check. The order is forced:
  // the decision holds the conversation and waits on the opt-out row, the flag (or read) holds the
  // message and waits on the conversation, then the opt-out row is released.
  const lockingTheText = {
    // The likely opt-out came in flagged: unflagging it is the change that moves the conversation's count.
    flag: (t: { business: { id: number } }, messageId: number) => flagMessage(t.business.id, messageId, false, { type: 'api' }),
    read: (t: { business: { id: number } }, messageId: number, conversationId: number) =>
      markMessagesRead(t.business.id, { conversation_id: conversationId, is_read: true }, { type: 'api' }),
  };
  it.each(Object.keys(lockingTheText) as (keyof typeof lockingTheText)[])(
    'a confirm and a %s of the pending text at once both go through (no deadlock)',
    async (kind) => {
      const t = await tenantWithClient();
      const pending = await t.texts('please stop texting me');
      const conv = await t.conversation();
      const optOutRow = holder(sql`insert into opt_outs (business_id, channel, address, source)
                                   values (${t.business.id}, 'sms', ${t.client.phoneNumber}, 'api')`);
      const held = await optOutRow.pid;
      const decision = decidePossibleOptOut(t.business.id, conv.id, 'confirm', { staffId: null });
      let other: Promise<unknown> = Promise.resolve();
      try {
        await untilBlockedBy('the decision waits on the opt-out row', '%insert into opt_outs%', held);
        const [deciding] = (await lockWaiters('%insert into opt_outs%')).filter((w) => w.blockers.includes(held));
        other = lockingTheText[kind](t, pending.id, conv.id);
        await untilBlockedBy(`the ${kind} waits on the conversation`, '%update conversations set%', deciding!.pid);
      } finally {
        optOutRow.release();
        await optOutRow.done;
      }

      const [decided, done] = await Promise.allSettled([decision, other]);
      expect(decided).toMatchObject({ status: 'fulfilled', value: { possible_opt_out_message_id: null, opted_out_sms: true } });
      expect(done, done.status === 'rejected' ? String(done.reason) : '').toMatchObject({ status: 'fulfilled' });
      const [row] = await db.select().from(messages).where(eq(messages.id, pending.id));
      expect(kind === 'flag' ? !row!.flagged : row!.isRead).toBe(true);
    },
    20_000,
  );

  it('confirm opts the number out for every client row with it, clears the pending text and notes who decided', async () => {
    const t = await tenantWithClient();
    const sameNumber = await createClient(t.business.id, { phoneNumber: t.client.phoneNumber });
    const flagged = await t.texts('please stop texting me');
    const conv = await t.conversation();

    const res = await t.decide(conv.id, { decision: 'confirm', message_id: flagged.id });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ possible_opt_out_message_id: null, opted_out_sms: true, opted_out_email: false });
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([
      expect.objectContaining({ channel: 'sms', address: t.client.phoneNumber, source: 'staff', messageId: flagged.id }),
    ]);
    expect(await t.notes()).toEqual([
      { content: `Marked opted out of texts by ${t.owner.name} after: "please stop texting me"`, staffId: t.owner.id },
    ]);
    // Any client row with that number is now refused.
    for (const clientId of [t.client.id, sameNumber.id]) {
      expect(await t.sendSms(clientId)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
    }
    // Decided once: a second click (or another staff member) finds nothing pending.
    expect((await t.decide(conv.id, { decision: 'dismiss' })).status).toBe(409);
    expect(await t.notes()).toHaveLength(1);
  });

  it('the attack: confirm opts out the number that sent the text, not only the client’s current one', async () => {
    const t = await tenantWithClient();
    const sender = t.client.phoneNumber!;
    const flagged = await t.texts('please stop texting me');
    // The client's number was changed since (a new phone, an edit in the CRM).
    const current = newPhone();
    await db.update(clients).set({ phoneNumber: current }).where(eq(clients.id, t.client.id));
    const conv = await t.conversation();
    const res = await t.decide(conv.id, { decision: 'confirm', message_id: flagged.id });
    expect(res.status).toBe(200);
    const rows = await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id)).orderBy(optOuts.address);
    expect(rows.map((r) => [r.address, r.source, r.messageId])).toEqual(
      [
        [sender, 'staff', flagged.id],
        [current, 'staff', flagged.id],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    // Both recorded as the staff member's decision on that text.
    const history = await db.select().from(optOutEvents).where(eq(optOutEvents.businessId, t.business.id));
    expect(history.map((h) => [h.address, h.action, h.staffId, h.messageId]).sort()).toEqual(
      [
        [sender, 'opt_out', t.owner.id, flagged.id],
        [current, 'opt_out', t.owner.id, flagged.id],
      ].sort(),
    );
    // Another client row still carrying the old number is refused too.
    const stillOld = await createClient(t.business.id, { phoneNumber: sender });
    expect(await t.sendSms(stillOld.id)).toMatchObject({ status: 'failed', errorCode: 'opted_out' });
  });

  it('an opt-out staff confirmed is the client’s: opting back in needs how the client asked (source and note)', async () => {
    const t = await tenantWithClient();
    await t.texts('please stop texting me');
    const conv = await t.conversation();
    expect((await t.decide(conv.id, { decision: 'confirm' })).status).toBe(200);
    const path = `/api/v1/businesses/${t.business.id}/clients/${t.client.id}/opt-outs/sms`;
    const bare = await api.delete(path, { headers: t.session });
    expect(bare.status).toBe(422);
    const body = await jsonOf(bare);
    expect(body.detail[0].msg).toContain(`staff confirmed the client's text "please stop texting me" as an opt-out`);
    expect(await clientOptOuts(t.client.id)).toEqual({ sms: true, email: false });
    const stated = await api.delete(path, { headers: t.session, body: { source: 'in_person', note: 'Asked at checkout' } });
    expect(stated.status).toBe(200);
    expect(await clientOptOuts(t.client.id)).toEqual({ sms: false, email: false });
  });

  it('dismiss keeps the client subscribed, clears the pending text and notes it', async () => {
    const t = await tenantWithClient();
    await t.texts('remove me from your list');
    const conv = await t.conversation();
    const headers = { ...t.session, 'idempotency-key': `dismiss-${conv.id}` };
    const res = await t.decide(conv.id, { decision: 'dismiss' }, headers);
    expect(res.status).toBe(200);
    // Retried with its Idempotency-Key, the request replays its answer and decides nothing twice.
    const retried = await t.decide(conv.id, { decision: 'dismiss' }, headers);
    expect(retried.status).toBe(200);
    expect(await jsonOf(retried)).toMatchObject({ possible_opt_out_message_id: null });
    expect(await t.notes()).toHaveLength(1);
    expect(await jsonOf(res)).toMatchObject({ possible_opt_out_message_id: null, opted_out_sms: false });
    expect((await t.conversation()).possibleOptOutMessageId).toBeNull();
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([]);
    expect((await t.notes())[0]!.content).toBe(`Kept subscribed by ${t.owner.name} after: "remove me from your list"`);
    expect(await t.sendSms(t.client.id)).toMatchObject({ status: 'queued', errorCode: null });
  });

  it('a decision about a text that is no longer the pending one is a 409 and changes nothing', async () => {
    const t = await tenantWithClient();
    const older = await t.texts('please stop texting me');
    const newer = await t.texts('not interested');
    const conv = await t.conversation();
    const res = await t.decide(conv.id, { decision: 'dismiss', message_id: older.id });
    expect(res.status).toBe(409);
    expect((await t.conversation()).possibleOptOutMessageId).toBe(newer.id);
    expect(await t.notes()).toEqual([]);
  });

  it('a pending text deleted meanwhile can still be confirmed: the opt-out names no cause, the note no quote', async () => {
    const t = await tenantWithClient();
    const flagged = await t.texts('please stop texting me');
    await db.delete(messages).where(eq(messages.id, flagged.id));
    const conv = await t.conversation();
    expect(conv.possibleOptOutMessageId).toBe(flagged.id);
    expect((await t.decide(conv.id, { decision: 'confirm' })).status).toBe(200);
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([
      expect.objectContaining({ address: t.client.phoneNumber, source: 'staff', messageId: null }),
    ]);
    expect((await t.notes())[0]!.content).toBe(`Marked opted out of texts by ${t.owner.name}`);
  });

  it("another business's conversation is a 404 and is left pending", async () => {
    const t = await tenantWithClient();
    const other = await tenantWithClient();
    await other.texts('please stop texting me');
    const foreign = await other.conversation();
    expect((await t.decide(foreign.id, { decision: 'confirm' })).status).toBe(404);
    expect((await t.decide(foreign.id, { decision: 'confirm' }, t.key)).status).toBe(404);
    expect((await other.conversation()).possibleOptOutMessageId).not.toBeNull();
    expect(await clientOptOuts(other.client.id)).toEqual({ sms: false, email: false });
  });

  it('REST: an API key without staff_id is noted as the API; a staff_id of another business is a 422', async () => {
    const t = await tenantWithClient();
    const other = await createTenant();
    await t.texts('please stop texting me');
    const conv = await t.conversation();
    const bad = await t.decide(conv.id, { decision: 'confirm', staff_id: other.owner.id }, t.key);
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'staff_id']]);
    const invalid = await t.decide(conv.id, { decision: 'maybe' }, t.key);
    expect((await jsonOf(invalid)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'decision']]);
    expect((await t.decide(conv.id, { decision: 'confirm' }, t.key)).status).toBe(200);
    expect((await t.notes())[0]!.content).toBe('Marked opted out of texts by the API after: "please stop texting me"');
  });
});
