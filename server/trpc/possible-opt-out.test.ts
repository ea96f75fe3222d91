import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, optOuts, businessSmsNumbers } from '@/db/schema';
import { clientOptOuts, createClient, createSmsNumber, createTenant } from '@/server/testing/factories';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { createContext } from './init';
import { createCaller } from './root';

/** The inbox's possible opt-out procedures (docs/api.md#possible-opt-outs): the banner, its filter, the client panel's control. */
async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

let counter = 0;
const newPhone = () => `+1929${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

async function pendingConversation() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number.phoneNumber, client.phoneNumber!, 'please stop texting me'));
  const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, client.id));
  return { ...t, client, conv: conv!, trpc: await callerFor(t.sessionToken) };
}

describe('tRPC inbox: possible opt-outs', () => {
  it('details, list filter and count show the pending text; confirm opts out as staff and clears it', async () => {
    const t = await pendingConversation();
    const details = await t.trpc.inbox.conversation({ conversationId: t.conv.id });
    expect(details.possible_opt_out_message_id).toBe(t.conv.possibleOptOutMessageId);
    expect(details.possible_opt_out_message_id).not.toBeNull();
    expect((await t.trpc.inbox.filters()).possible_opt_out).toBe(1);
    const listed = await t.trpc.inbox.list({ possible_opt_out: 'true' });
    expect(listed.conversations.map((c) => c.conversation_id)).toEqual([t.conv.id]);
    expect((await t.trpc.inbox.list({ possible_opt_out: 'false' })).conversations).toEqual([]);
    const messageId = details.possible_opt_out_message_id!;
    expect(await t.trpc.inbox.possibleOptOut({ conversationId: t.conv.id, messageId })).toMatchObject({
      messageId,
      content: 'please stop texting me',
    });

    const after = await t.trpc.inbox.decidePossibleOptOut({
      conversationId: t.conv.id,
      decision: 'confirm',
      messageId: details.possible_opt_out_message_id!,
    });
    expect(after).toMatchObject({ possible_opt_out_message_id: null, opted_out_sms: true });
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([
      expect.objectContaining({ source: 'staff', messageId: details.possible_opt_out_message_id }),
    ]);
    expect((await t.trpc.inbox.filters()).possible_opt_out).toBe(0);
    expect(await t.trpc.inbox.possibleOptOut({ conversationId: t.conv.id, messageId })).toBeNull();
    await expect(t.trpc.inbox.decidePossibleOptOut({ conversationId: t.conv.id, decision: 'dismiss' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it("another business's conversation or client is NOT_FOUND and nothing changes", async () => {
    const t = await pendingConversation();
    const other = await pendingConversation();
    await expect(t.trpc.inbox.decidePossibleOptOut({ conversationId: other.conv.id, decision: 'confirm' })).rejects.toMatchObject(
      { code: 'NOT_FOUND' },
    );
    await expect(
      t.trpc.inbox.setClientOptOut({ clientId: other.client.id, channel: 'sms', optedOut: true, note: 'Asked us to stop' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await clientOptOuts(other.client.id)).toEqual({ sms: false, email: false });
    const [conv] = await db.select().from(conversations).where(eq(conversations.id, other.conv.id));
    expect(conv!.possibleOptOutMessageId).toBe(other.conv.possibleOptOutMessageId);
  });

  it('the client panel control opts out and back in with source staff', async () => {
    const t = await pendingConversation();
    const out = await t.trpc.inbox.setClientOptOut({
      clientId: t.client.id,
      channel: 'sms',
      optedOut: true,
      note: 'Asked at the desk to stop texts',
    });
    expect(out).toMatchObject({ opted_out_sms: true, possible_opt_out_message_id: null });
    expect(await db.select().from(optOuts).where(eq(optOuts.businessId, t.business.id))).toEqual([
      expect.objectContaining({ channel: 'sms', address: t.client.phoneNumber, source: 'staff' }),
    ]);
    const back = await t.trpc.inbox.setClientOptOut({ clientId: t.client.id, channel: 'sms', optedOut: false });
    expect(back.opted_out_sms).toBe(false);
    expect(await clientOptOuts(t.client.id)).toEqual({ sms: false, email: false });
    expect((await t.trpc.inbox.optOutHistory({ conversationId: t.conv.id })).history).toEqual([
      expect.objectContaining({ action: 'opt_in', source: 'staff', staff_id: t.owner.id }),
      expect.objectContaining({
        action: 'opt_out',
        source: 'staff',
        staff_id: t.owner.id,
        note: 'Asked at the desk to stop texts',
      }),
    ]);
  });

  it('after the client’s STOP, staff opt them back in only by saying how the client asked; the history shows both', async () => {
    const t = await pendingConversation();
    const number = (await db.select().from(businessSmsNumbers).where(eq(businessSmsNumbers.businessId, t.business.id)))[0]!;
    await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number.phoneNumber, t.client.phoneNumber!, 'STOP'));
    const bare = t.trpc.inbox.setClientOptOut({ clientId: t.client.id, channel: 'sms', optedOut: false });
    await expect(bare).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT', message: expect.stringMatching(/texted "STOP"/) });
    expect(await clientOptOuts(t.client.id)).toEqual({ sms: true, email: false });

    const back = await t.trpc.inbox.setClientOptOut({
      clientId: t.client.id,
      channel: 'sms',
      optedOut: false,
      source: 'in_person',
      note: 'Asked at the front desk for reminders again',
    });
    expect(back.opted_out_sms).toBe(false);
    expect((await t.trpc.inbox.optOutHistory({ conversationId: t.conv.id })).history).toEqual([
      expect.objectContaining({
        action: 'opt_in',
        source: 'in_person',
        note: 'Asked at the front desk for reminders again',
        staff_id: t.owner.id,
      }),
      expect.objectContaining({ action: 'opt_out', source: 'keyword', staff_id: null }),
    ]);
    const other = await pendingConversation();
    await expect(t.trpc.inbox.optOutHistory({ conversationId: other.conv.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
