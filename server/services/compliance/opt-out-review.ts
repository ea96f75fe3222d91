import { eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { staff } from '@/db/schema';
import { AppError } from '@/server/errors';
import { insertNote } from '@/server/services/conversations/messages';
import { requireStaff } from '@/server/services/directory';
import { conversationDetails, resolveConversation, type ConversationRef } from '@/server/services/conversations';
import { optOut } from '@/server/services/messages/suppression';

/**
 * Staff deciding a conversation's pending possible opt-out (docs/api.md#possible-opt-outs): a text
 * that reads like a revocation without being a rule word is flagged and left pending by the inbound
 * path; staff confirm it (the number that sent it, and the client's current one if another, are
 * opted out of SMS) or dismiss it (the client keeps receiving texts). Either way the pending id is
 * cleared and a note in the timeline records who decided and on which text: the opt-out history
 * records a confirmation (who, which text), and the note is where staff already look for a
 * conversation's history.
 */

export type OptOutDecision = 'confirm' | 'dismiss';

/** How much of the client's text the note quotes: enough to recognise it (the text itself stays in the timeline). */
const QUOTE_LENGTH = 200;

/** Who decided, as a note names them: the staff member, or the API for a key acting without one. */
export async function deciderName(businessId: number, staffId: number | null, tx: Tx = db): Promise<string> {
  if (staffId === null) return 'the API';
  const [member] = await tx.select({ name: staff.name, businessId: staff.businessId }).from(staff).where(eq(staff.id, staffId));
  return member && member.businessId === businessId ? member.name : 'the API';
}

/**
 * The pending text the banner quotes: message `messageId` of the conversation, when it is still the
 * pending one (null otherwise, e.g. decided meanwhile). Read by primary key.
 */
export async function pendingOptOutText(businessId: number, ref: ConversationRef, messageId: number, tx: Tx = db) {
  const conversation = await resolveConversation(businessId, ref, tx);
  const [row] = await tx.execute<{ content: string | null; sent_at: Date | null }>(sql`
    select m.content, m.sent_at from conversations c
    join messages m on m.business_id = c.business_id and m.id = c.possible_opt_out_message_id
    where c.business_id = ${businessId} and c.id = ${conversation.id} and c.possible_opt_out_message_id = ${messageId}`);
  return row ? { messageId, content: row.content ?? '', sentAt: row.sent_at ? new Date(row.sent_at).toISOString() : null } : null;
}

const quoted = (text: string) => `"${text.length > QUOTE_LENGTH ? `${text.slice(0, QUOTE_LENGTH)}…` : text}"`;

/**
 * Confirms or dismisses the conversation's pending possible opt-out, answering the conversation's
 * details. `messageId`, when given, must be the pending text (the one the staff member saw): a newer
 * one that arrived meanwhile is not decided blindly. Nothing pending (already decided, or another
 * text) is a 409.
 */
export async function decidePossibleOptOut(
  businessId: number,
  ref: ConversationRef,
  decision: OptOutDecision,
  opts: { messageId?: number; staffId: number | null },
  tx: Tx = db,
) {
  const conversation = await resolveConversation(businessId, ref, tx);
  if (opts.staffId !== null) await requireStaff(businessId, opts.staffId, ['body', 'staff_id'], tx);
  return tx.transaction(async (tx) => {
    // Locks the conversation (before any opt-out, as setClientOptOut does): of two staff members
    // deciding at once, the second finds nothing pending. NO KEY UPDATE, the lock an UPDATE takes:
    // it does not wait for a message insert's foreign-key check on the conversation.
    const [pending] = await tx.execute<{
      message_id: number | null;
      stored: boolean;
      content: string | null;
      sender: string | null;
      phone: string | null;
    }>(sql`
      select c.possible_opt_out_message_id as message_id, m.id is not null as stored, m.content,
        case when m.direction = 'inbound' and m.channel = 'sms' then m.from_address end as sender, cl.phone_number as phone
      from conversations c
      join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
      left join messages m on m.business_id = c.business_id and m.id = c.possible_opt_out_message_id
      where c.business_id = ${businessId} and c.id = ${conversation.id}
      for no key update of c`);
    const messageId = pending?.message_id === null || pending?.message_id === undefined ? null : Number(pending.message_id);
    if (messageId === null || (opts.messageId !== undefined && opts.messageId !== messageId)) {
      throw new AppError('conflict', 'No such possible opt-out is pending in this conversation: it was already decided');
    }
    if (decision === 'confirm') {
      // The number that sent the text is the one that asked; the client's current number too, when
      // it is another (the client may have changed it since, or the text came from a second phone).
      const numbers = [...new Set([pending!.sender, pending!.phone].filter((n): n is string => !!n?.trim()))];
      if (numbers.length === 0)
        throw AppError.invalid(['body', 'decision'], 'This client has no mobile number to opt out', 'missing');
      // The cause is named while the text exists (the pending id has no foreign key; opt_outs.message_id has).
      const cause = pending!.stored ? messageId : null;
      for (const address of numbers)
        await optOut({ businessId, channel: 'sms', address, source: 'staff', messageId: cause, staffId: opts.staffId }, tx);
    }
    await tx.execute(sql`update conversations set possible_opt_out_message_id = null
                         where business_id = ${businessId} and id = ${conversation.id}`);
    const who = await deciderName(businessId, opts.staffId, tx);
    const after = pending!.content ? ` after: ${quoted(pending!.content)}` : '';
    const note = decision === 'confirm' ? `Marked opted out of texts by ${who}${after}` : `Kept subscribed by ${who}${after}`;
    // The note's event (note.created) names the conversation: the inbox refetches it, the pending text gone.
    await insertNote(conversation, note, opts.staffId, [], tx);
    return conversationDetails(businessId, conversation.id, tx);
  });
}
