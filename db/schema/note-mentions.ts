import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, primaryKey, timestamp } from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { sameBusinessFk } from './columns';
import { conversations } from './conversations';
import { messages } from './messages';
import { staff } from './staff';

/**
 * @mentions in notes (docs/api.md#mentions): one row per note and staff member it mentions, written
 * with the note (never parsed back out of its text). `seen_at` is null until the mentioned staff
 * member opens the conversation after the note was written; the inbox's Mentions view lists the
 * conversations where they have unseen ones.
 */
export const noteMentions = pgTable(
  'note_mentions',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    /** The note (messages.id, message_type NOTE). */
    messageId: bigint('message_id', { mode: 'number' }).notNull(),
    conversationId: integer('conversation_id').notNull(),
    staffId: integer('staff_id').notNull(),
    seenAt: timestamp('seen_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'note_mentions_pkey', columns: [t.messageId, t.staffId] }),
    sameBusinessFk('note_mentions_message_fk', t.businessId, t.messageId, messages).onDelete('cascade'),
    sameBusinessFk('note_mentions_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    sameBusinessFk('note_mentions_staff_fk', t.businessId, t.staffId, staff).onDelete('cascade'),
    // The Mentions view and its count: a staff member's unseen mentions, by conversation; and
    // opening a conversation marks its unseen mentions of the opener seen.
    index('note_mentions_unseen_idx')
      .on(t.businessId, t.staffId, t.conversationId)
      .where(sql`${t.seenAt} is null`),
  ],
);
