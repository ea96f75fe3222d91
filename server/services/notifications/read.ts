import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { notifications } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { MAX_BELL_PAGE } from '@/server/shared/notifications';

/**
 * The bell (docs/api.md#notifications): a staff member's notifications shown in the inbox, newest
 * first, and how many are unread; marking one, all, or a conversation's read. The bell lists, counts
 * and marks only rows the staff member wants in the inbox (`in_app`): one they get by email only was
 * never in front of them, and reading it would drop its email. Opening a conversation reads all of
 * its notifications. Every query is the staff member's own, within the business.
 */

export type BellItem = {
  id: number;
  kind: (typeof notifications.$inferSelect)['kind'];
  conversationId: number | null;
  title: string;
  body: string;
  count: number;
  browser: boolean;
  updatedAt: Date;
  readAt: Date | null;
};

const mine = (businessId: number, staffId: number) =>
  and(eq(notifications.businessId, businessId), eq(notifications.staffId, staffId), eq(notifications.inApp, true));

/** The newest `limit`, after `before` (the id of the previous page's last), and the unread count. */
export async function bell(
  businessId: number,
  staffId: number,
  opts: { limit?: number; before?: number } = {},
  tx: Tx = db,
): Promise<{ items: BellItem[]; unread: number }> {
  const limit = Math.min(opts.limit ?? 30, MAX_BELL_PAGE);
  // After the previous page's last row (one of theirs), at its time as stored (microseconds: a Date would cut them).
  const page =
    opts.before === undefined
      ? undefined
      : sql`(${notifications.updatedAt}, ${notifications.id}) < (select p.updated_at, p.id from notifications p
          where p.id = ${opts.before} and p.business_id = ${businessId} and p.staff_id = ${staffId})`;
  const [items, [count]] = await Promise.all([
    tx
      .select({
        id: notifications.id,
        kind: notifications.kind,
        conversationId: notifications.conversationId,
        title: notifications.title,
        body: notifications.body,
        count: notifications.count,
        browser: notifications.browser,
        updatedAt: notifications.updatedAt,
        readAt: notifications.readAt,
      })
      .from(notifications)
      .where(and(mine(businessId, staffId), page))
      .orderBy(desc(notifications.updatedAt), desc(notifications.id))
      .limit(limit),
    tx
      .select({ n: sql<number>`count(*)::int` })
      .from(notifications)
      .where(and(mine(businessId, staffId), isNull(notifications.readAt))),
  ]);
  return { items, unread: count!.n };
}

/**
 * Marks read: one notification of the bell (`id`), all of the bell's, or every one of a conversation
 * (`conversationId`: it was opened). Answers how many. The rows are locked in conversation order,
 * as the notifications handler writes a staff member's rows (./handler.ts): never a deadlock.
 */
export async function markNotificationsRead(
  businessId: number,
  staffId: number,
  which: { id: number } | { conversationId: number } | 'all',
  tx: Tx = db,
): Promise<number> {
  const only =
    which === 'all'
      ? sql`and in_app`
      : 'id' in which
        ? sql`and in_app and id = ${which.id}`
        : sql`and conversation_id = ${which.conversationId}`;
  const read = await tx.execute(sql`
    update notifications set read_at = now()
    where id in (
      select id from notifications
      where business_id = ${businessId} and staff_id = ${staffId} and read_at is null ${only}
      order by conversation_id, id
      for update)`);
  return read.count;
}
