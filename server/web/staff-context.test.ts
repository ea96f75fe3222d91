import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { createClient, createConversation, createSmsNumber, createStaff } from '@/server/testing/factories';
import { locs, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { createContext } from '@/server/trpc/init';
import { createCaller } from '@/server/trpc/root';

/**
 * One rule for every write's body `staff_id` (docs/api.md#staff-sessions): a staff session acts as
 * its own staff member. Each write that takes one is replayed as the attack it was, a session
 * signing as a colleague, which is a 422 on the field that changes nothing; naming itself is fine,
 * and an API key may still name a staff member.
 */

let counter = 0;
const newPhone = () => `+1415${String(Date.now() % 1e4).padStart(4, '0')}${String(++counter).padStart(3, '0')}`;

async function setup() {
  const t = await restTenant();
  const number = await createSmsNumber(t.business.id);
  const colleague = await createStaff(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  const conversation = await createConversation(t.business.id, client.id);
  const count = async () =>
    (await db.select({ id: messages.id }).from(messages).where(eq(messages.businessId, t.business.id))).length;
  return { ...t, number, colleague, client, conversation, count };
}

/** Each write, with a body naming `staffId`; `check` reads what it left behind. */
const writes = (t: Awaited<ReturnType<typeof setup>>) => {
  const item = { client_id: t.client.id };
  return {
    note: (staffId: number) => ({
      path: `${t.base}/conversations/${t.conversation.id}/notes`,
      body: { content: 'Client prefers mornings', staff_id: staffId },
    }),
    status: (staffId: number) => ({
      path: `${t.base}/conversations/${t.conversation.id}/status`,
      body: { status: 'resolved', staff_id: staffId },
    }),
    sms: (staffId: number) => ({
      path: `${t.base}/sms`,
      body: { sender_type: 'staff', staff_id: staffId, messages: [{ ...item, message: 'Hi' }] },
    }),
    'sms record': (staffId: number) => ({
      path: `${t.base}/sms/record`,
      body: { sender_type: 'staff', staff_id: staffId, messages: [{ ...item, message: 'Hi', status: 'delivered' }] },
    }),
    email: (staffId: number) => ({
      path: `${t.base}/email`,
      body: { sender_type: 'staff', staff_id: staffId, messages: [{ ...item, subject: 'Hi', message: 'Hi' }] },
    }),
    'email record': (staffId: number) => ({
      path: `${t.base}/email/record`,
      body: { sender_type: 'staff', staff_id: staffId, messages: [{ ...item, subject: 'Hi', message: 'Hi' }] },
    }),
    'messages (sms, send)': (staffId: number) => ({
      path: `/api/v1/messages/${t.business.id}`,
      body: { channel: 'sms', mode: 'send', sender_type: 'staff', staff_id: staffId, messages: [{ ...item, message: 'Hi' }] },
    }),
    'messages (email, record)': (staffId: number) => ({
      path: `/api/v1/messages/${t.business.id}`,
      body: {
        channel: 'email',
        mode: 'record',
        sender_type: 'staff',
        staff_id: staffId,
        messages: [{ ...item, subject: 'Hi', message: 'Hi' }],
      },
    }),
  };
};

const conversationRow = async (t: RestTenant, id: number) =>
  (
    await db
      .select()
      .from(conversations)
      .where(and(eq(conversations.businessId, t.business.id), eq(conversations.id, id)))
  )[0]!;

describe('a staff session acts as its own staff member', () => {
  it('a session naming a colleague is a 422 on body.staff_id and writes nothing, on every write', async () => {
    const t = await setup();
    for (const [name, write] of Object.entries(writes(t))) {
      const { path, body } = write(t.colleague.id);
      const res = await postJson(path, t.session, body);
      expect(res.status, name).toBe(422);
      expect(locs(res.body), name).toEqual([['body', 'staff_id']]);
      expect(res.body.detail[0].msg, name).toMatch(/acts as its own staff member/);
    }
    expect(await t.count()).toBe(0);
    expect(await conversationRow(t, t.conversation.id)).toMatchObject({ status: 'open', resolvedByStaffId: null });
  });

  it('a session naming itself, or an API key naming a colleague, is accepted and attributed so', async () => {
    const t = await setup();
    for (const [name, write] of Object.entries(writes(t))) {
      for (const [headers, staffId] of [
        [t.session, t.owner.id],
        [t.key, t.colleague.id],
      ] as const) {
        const { path, body } = write(staffId);
        const res = await postJson(path, headers, body);
        expect(res.status, `${name} ${JSON.stringify(res.body)}`).toBe(200);
      }
    }
    const notes = await db
      .select({ staffId: messages.staffId })
      .from(messages)
      .where(and(eq(messages.businessId, t.business.id), eq(messages.messageType, 'NOTE')));
    expect(notes.map((n) => n.staffId).sort()).toEqual([t.owner.id, t.colleague.id].sort());
    // The last status write was the key's, naming the colleague.
    expect((await conversationRow(t, t.conversation.id)).resolvedByStaffId).toBe(t.colleague.id);
  });

  it("without staff_id a session's note and status change are its own", async () => {
    const t = await setup();
    expect((await postJson(`${t.base}/conversations/${t.conversation.id}/notes`, t.session, { content: 'Hi' })).status).toBe(200);
    expect(
      (await postJson(`${t.base}/conversations/${t.conversation.id}/status`, t.session, { status: 'resolved' })).status,
    ).toBe(200);
    expect((await conversationRow(t, t.conversation.id)).resolvedByStaffId).toBe(t.owner.id);
    const [note] = await db.select().from(messages).where(eq(messages.businessId, t.business.id));
    expect(note!.staffId).toBe(t.owner.id);
  });

  it("without staff_id a session's sends and records are its own, on every door", async () => {
    const t = await setup();
    const ids: number[] = [];
    for (const [name, write] of Object.entries(writes(t))) {
      if (!name.includes('sms') && !name.includes('email') && !name.startsWith('messages')) continue;
      const { path, body } = write(t.owner.id);
      const { staff_id: _named, ...unnamed } = body as { staff_id?: number };
      const res = await postJson(path, t.session, unnamed);
      expect(res.status, `${name} ${JSON.stringify(res.body)}`).toBe(200);
      ids.push(...(res.body.message_ids as number[]));
    }
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const rows = await db.select({ staffId: messages.staffId }).from(messages).where(inArray(messages.id, ids));
    expect(rows.map((r) => r.staffId)).toEqual(ids.map(() => t.owner.id));
  });

  it('the possible-opt-out decision: a session cannot decide (and sign the note) as a colleague', async () => {
    const t = await setup();
    await postTwilio(
      TWILIO_PATHS.smsIncoming,
      inboundSmsForm(t.number.phoneNumber, t.client.phoneNumber!, 'please stop texting me'),
    );
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, t.client.id));
    const path = `${t.base}/conversations/${conv!.id}/possible-opt-out`;
    const res = await postJson(path, t.session, { decision: 'dismiss', staff_id: t.colleague.id });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'staff_id']]);
    expect((await conversationRow(t, conv!.id)).possibleOptOutMessageId).not.toBeNull();
    // An API key may say which staff member decided.
    expect((await postJson(path, t.key, { decision: 'dismiss', staff_id: t.colleague.id })).status).toBe(200);
    const [note] = await db
      .select({ content: messages.content, staffId: messages.staffId })
      .from(messages)
      .where(and(eq(messages.businessId, t.business.id), eq(messages.messageType, 'NOTE')));
    expect(note).toEqual({
      content: `Kept subscribed by ${t.colleague.name} after: "please stop texting me"`,
      staffId: t.colleague.id,
    });
  });

  it('the inbox (tRPC) follows the same rule: a status change signed as a colleague is refused', async () => {
    const t = await setup();
    const req = new Request('http://localhost:3000/api/trpc/x', {
      method: 'POST',
      headers: { host: 'localhost:3000', cookie: `session=${t.sessionToken}`, origin: 'http://localhost:3000' },
    });
    const trpc = createCaller(await createContext({ req }));
    await expect(
      trpc.inbox.setStatus({ conversationId: t.conversation.id, status: 'resolved', staff_id: t.colleague.id }),
    ).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    expect(await conversationRow(t, t.conversation.id)).toMatchObject({ status: 'open', resolvedByStaffId: null });
    await trpc.inbox.setStatus({ conversationId: t.conversation.id, status: 'resolved' });
    expect((await conversationRow(t, t.conversation.id)).resolvedByStaffId).toBe(t.owner.id);
  });
});
