import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { equalsAny } from '@/db/sql-array';
import { noteMentions, staff } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { activeStaffOf } from '@/server/services/directory';

/*
 * @mentions in notes (docs/api.md#mentions). A note names the staff it mentions as ids, given with
 * it (the inbox's picker keeps the id of each name it inserts); they are stored as rows of
 * note_mentions with the note, never read back out of its words. A mention is unseen until the
 * mentioned staff member opens the conversation after the note was written; the inbox's Mentions
 * view lists the conversations where they have unseen ones.
 */

/**
 * The staff a note mentions, each an active staff member of the business (else one 422 naming
 * every bad entry, `loc` [...loc, index]); a repeated id counts once. In the given order.
 */
export async function validateMentions(
  businessId: number,
  staffIds: readonly number[],
  loc: ['body', string],
  tx: Tx = db,
): Promise<number[]> {
  const unique = [...new Set(staffIds)];
  if (unique.length === 0) return [];
  const found = await tx
    .select({ id: staff.id })
    .from(staff)
    .where(and(activeStaffOf(businessId), equalsAny(staff.id, unique, 'int')));
  const active = new Set(found.map((s) => s.id));
  const issues: ValidationIssue[] = staffIds.flatMap((id, index) =>
    active.has(id)
      ? []
      : [{ loc: [...loc, index], msg: `Staff ${id} is not an active staff member of this business`, type: 'value_error' }],
  );
  if (issues.length) throw new AppError('validation', 'Invalid mentions', { issues });
  return unique;
}

/** The note's mention rows, in the note's transaction. */
export async function recordMentions(
  note: { businessId: number; conversationId: number; messageId: number },
  staffIds: readonly number[],
  tx: Tx,
): Promise<void> {
  if (staffIds.length === 0) return;
  await tx.insert(noteMentions).values(
    staffIds.map((staffId) => ({
      businessId: note.businessId,
      messageId: note.messageId,
      conversationId: note.conversationId,
      staffId,
    })),
  );
}

/**
 * The staff member opened the conversation: their unseen mentions in it are seen. Answers how many
 * were (0 most times: the inbox asks on every opening, and the partial index makes that one probe).
 */
export async function markMentionsSeen(businessId: number, conversationId: number, staffId: number, tx: Tx = db) {
  const seen = await tx
    .update(noteMentions)
    .set({ seenAt: sql`now()` })
    .where(
      and(
        eq(noteMentions.businessId, businessId),
        eq(noteMentions.staffId, staffId),
        eq(noteMentions.conversationId, conversationId),
        isNull(noteMentions.seenAt),
      ),
    )
    .returning({ messageId: noteMentions.messageId });
  return { seen: seen.length };
}

/** How many conversations have mentions of the staff member they have not seen: the Mentions view's count. */
export async function unseenMentionCount(businessId: number, staffId: number, tx: Tx = db): Promise<number> {
  const [row] = await tx.execute<{ n: number }>(sql`
    select count(distinct conversation_id)::int as n from note_mentions
    where business_id = ${businessId} and staff_id = ${staffId} and seen_at is null`);
  return row!.n;
}

/** The list's condition for the Mentions view (conversation alias `c`): the staff member has unseen mentions in it. */
export const hasUnseenMention = (businessId: unknown, staffId: unknown): SQL =>
  sql`c.id in (select nm.conversation_id from note_mentions nm
    where nm.business_id = ${businessId} and nm.staff_id = ${staffId} and nm.seen_at is null)`;
