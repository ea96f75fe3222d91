import { describe, expect, it } from 'vitest';
import { appointments } from '@/db/schema';
import { db } from '@/server/db/client';
import type { NeedsAttentionReason } from '@/server/shared/conversations';
import { createClient, createConversation } from '@/server/testing/factories';
import { getJson, restTenant, type RestTenant } from '@/server/testing/http';
import { staffCaller } from '@/server/testing/trpc';
import { clearNeedsAttentionFor, flagNeedsAttention, needsAttentionCount } from './needs-attention';

/**
 * The Needs attention view (docs/api.md#needs-attention) as its two readers see it: the REST list's
 * `needs_attention` filter and the inbox's (`inbox.list`), and the count the sidebar shows
 * (`inbox.filters`' `needs_attention`, needsAttentionCount): the same conversations, whatever
 * their status, only the business's own, and one fewer once staff decide its appointment.
 */

/** A client's conversation in `status`, flagged for an appointment of theirs when `reason` is given. */
async function conversationOf(t: RestTenant, status: 'open' | 'pending' | 'snoozed', reason: NeedsAttentionReason | null) {
  const client = await createClient(t.business.id);
  const conversation = await createConversation(t.business.id, client.id, {
    status,
    ...(status === 'snoozed' && { snoozedUntil: new Date(Date.now() + 86_400_000) }),
  });
  const [appointment] = await db
    .insert(appointments)
    .values({
      businessId: t.business.id,
      externalId: `a-${conversation.id}`,
      clientId: client.id,
      startsAt: new Date(Date.now() + 2 * 86_400_000),
      endsAt: new Date(Date.now() + 2 * 86_400_000 + 3_600_000),
    })
    .returning();
  if (reason)
    await db.transaction((tx) =>
      flagNeedsAttention(t.business.id, conversation.id, { reason, appointmentId: appointment!.id, at: new Date() }, tx),
    );
  return { id: conversation.id, appointmentId: appointment!.id };
}

const idsOf = (body: { conversations: { conversation_id: number }[] }) => body.conversations.map((c) => c.conversation_id).sort();

describe('Needs attention: the list filter and the sidebar count', () => {
  it('lists and counts the business’s flagged conversations whatever their status; a decision takes one out', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const reschedule = await conversationOf(t, 'open', 'reschedule');
    const unclear = await conversationOf(t, 'pending', 'unclear');
    const snoozedCancel = await conversationOf(t, 'snoozed', 'cancel');
    const plain = await conversationOf(t, 'open', null);
    const plainPending = await conversationOf(t, 'pending', null);
    await conversationOf(other, 'open', 'reschedule');
    const flagged = [reschedule.id, unclear.id, snoozedCancel.id].sort();

    const listed = await getJson(`${t.base}/conversations?needs_attention=true`, t.key);
    expect(listed.status).toBe(200);
    expect(idsOf(listed.body)).toEqual(flagged);
    expect(listed.body.total_conversations).toBe(3);
    expect(
      Object.fromEntries(
        (listed.body.conversations as { conversation_id: number; needs_attention_reason: string }[]).map((c) => [
          c.conversation_id,
          c.needs_attention_reason,
        ]),
      ),
    ).toEqual({ [reschedule.id]: 'reschedule', [unclear.id]: 'unclear', [snoozedCancel.id]: 'cancel' });
    const rest = await getJson(`${t.base}/conversations?needs_attention=false`, t.key);
    expect(idsOf(rest.body)).toEqual([plain.id, plainPending.id].sort());
    // With another filter: both apply.
    const open = await getJson(`${t.base}/conversations?needs_attention=true&status=open`, t.key);
    expect(idsOf(open.body)).toEqual([reschedule.id]);

    // The inbox: the same list (as the sidebar's view asks for it) and the count beside it.
    const inbox = await staffCaller(t.sessionToken);
    const view = await inbox.inbox.list({ needs_attention: 'true' });
    expect(view.conversations.map((c) => c.conversation_id).sort()).toEqual(flagged);
    expect((await inbox.inbox.filters()).needs_attention).toBe(3);
    expect(await needsAttentionCount(other.business.id)).toBe(1);

    // Staff decide one appointment (the card's confirm and cancel, a PUT, DELETE): it leaves the view and the count.
    await db.transaction((tx) => clearNeedsAttentionFor(t.business.id, unclear.appointmentId, tx));
    expect((await inbox.inbox.filters()).needs_attention).toBe(2);
    const after = await getJson(`${t.base}/conversations?needs_attention=true`, t.key);
    expect(idsOf(after.body)).toEqual([reschedule.id, snoozedCancel.id].sort());
    expect(await needsAttentionCount(other.business.id)).toBe(1);
  });
});
