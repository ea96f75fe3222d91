import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { events, noteMentions } from '@/db/schema';
import { issueSession } from '@/server/services/auth';
import { createClient, createConversation, createStaff } from '@/server/testing/factories';
import { locs, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { staffCaller } from '@/server/testing/trpc';
import { MAX_NOTE_MENTIONS } from '@/server/shared/limits';

/**
 * @mentions in notes (docs/api.md#mentions): the REST and inbox notes store one row per mentioned
 * staff member and name them in note.created; only active staff of the business may be mentioned;
 * the Mentions view lists a staff member's conversations with unseen mentions until they open it.
 */

let t: RestTenant;
let ana: { id: number; token: string };
let sam: { id: number; token: string };
/** A new active staff member with a session. */
async function member(name: string) {
  const s = await createStaff(t.business.id, { name });
  const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: s.id });
  return { id: s.id, token: session.token };
}
beforeAll(async () => {
  t = await restTenant();
  [ana, sam] = await Promise.all([member('Ana'), member('Sam')]);
});

let n = 0;
async function conversation() {
  const client = await createClient(t.business.id, { phoneNumber: `+1415${String(4_400_000 + n++)}` });
  return createConversation(t.business.id, client.id);
}
const note = (conversationId: number, body: Record<string, unknown>) =>
  postJson(`${t.base}/conversations/${conversationId}/notes`, t.key, { content: 'See @Ana', ...body });
const noteEvent = async (messageId: number) =>
  (
    await db
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.messageId, messageId), eq(events.type, 'note.created')))
  )[0]!.data;

describe('mentions', () => {
  it('stores a row per mentioned staff member (a repeat once) and names them in note.created', async () => {
    const c = await conversation();
    const res = await note(c.id, { mentions: [ana.id, sam.id, ana.id] });
    expect(res.status).toBe(200);
    const messageId = res.body.data.message_id as number;
    const rows = await db.select().from(noteMentions).where(eq(noteMentions.messageId, messageId));
    expect(rows.map((r) => [r.staffId, r.conversationId, r.businessId, r.seenAt]).sort()).toEqual(
      [
        [ana.id, c.id, t.business.id, null],
        [sam.id, c.id, t.business.id, null],
      ].sort(),
    );
    expect(await noteEvent(messageId)).toMatchObject({ mentioned_staff_ids: [ana.id, sam.id] });

    // A note without mentions: none stored, an empty list in its event.
    const plain = await note(c.id, {});
    expect(await noteEvent(plain.body.data.message_id)).toMatchObject({ mentioned_staff_ids: [] });
  });

  it('refuses staff who are inactive or of another business, and too many, naming each entry', async () => {
    const c = await conversation();
    const gone = await createStaff(t.business.id, { name: 'Left', active: false });
    const other = await restTenant();
    const res = await note(c.id, { mentions: [ana.id, gone.id, other.owner.id] });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([
      ['body', 'mentions', 1],
      ['body', 'mentions', 2],
    ]);
    const tooMany = await note(c.id, { mentions: Array.from({ length: MAX_NOTE_MENTIONS + 1 }, () => ana.id) });
    expect(tooMany.status).toBe(422);
    expect(locs(tooMany.body)).toEqual([['body', 'mentions']]);
    for (const bad of [[0], ['1'], 'x', [1.5]])
      expect((await note(c.id, { mentions: bad })).status, JSON.stringify(bad)).toBe(422);
    // Nothing was stored for a refused note.
    expect(await db.select().from(noteMentions).where(eq(noteMentions.conversationId, c.id))).toEqual([]);
  });

  it('the Mentions view lists conversations until the mentioned staff member opens them; a later mention lists it again', async () => {
    const c = await conversation();
    const quiet = await conversation();
    // Mentioned nowhere else in this file.
    const [lee, kim] = await Promise.all([member('Lee'), member('Kim')]);
    const [asLee, asKim] = await Promise.all([staffCaller(lee.token), staffCaller(kim.token)]);
    // Lee mentions Kim from the inbox.
    await asLee.inbox.addNote({ conversationId: c.id, content: '@Kim can you call her?', mentions: [kim.id] });
    await asLee.inbox.addNote({ conversationId: quiet.id, content: 'No mention here' });

    const mentioned = async (caller: typeof asKim) => ({
      ids: (await caller.inbox.list({ mentioned: true })).conversations.map((x) => x.conversation_id),
      count: (await caller.inbox.filters()).mentions,
    });
    expect(await mentioned(asKim)).toEqual({ ids: [c.id], count: 1 });
    // The author is not mentioned; opening the conversation is Kim's to do, not Lee's.
    expect(await mentioned(asLee)).toEqual({ ids: [], count: 0 });
    expect(await asLee.inbox.seeMentions({ conversationId: c.id })).toMatchObject({ seen: 0 });
    expect((await mentioned(asKim)).count).toBe(1);

    expect(await asKim.inbox.seeMentions({ conversationId: c.id })).toMatchObject({ seen: 1 });
    expect(await mentioned(asKim)).toEqual({ ids: [], count: 0 });
    const [row] = await db.select().from(noteMentions).where(eq(noteMentions.conversationId, c.id));
    expect(row!.seenAt).toBeInstanceOf(Date);

    // A new note mentioning Kim: the conversation is listed again.
    await asLee.inbox.addNote({ conversationId: c.id, content: '@Kim again', mentions: [kim.id] });
    expect(await mentioned(asKim)).toEqual({ ids: [c.id], count: 1 });
  });

  it('keeps to the business: another business’s conversation is not found, its staff see nothing', async () => {
    const c = await conversation();
    await note(c.id, { mentions: [sam.id] });
    const other = await restTenant();
    const outsider = await staffCaller(other.sessionToken);
    await expect(outsider.inbox.seeMentions({ conversationId: c.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await outsider.inbox.list({ mentioned: true })).conversations).toEqual([]);
    const [row] = await db.select().from(noteMentions).where(eq(noteMentions.conversationId, c.id));
    expect(row!.seenAt).toBeNull();
  });
});
