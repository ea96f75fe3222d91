import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { NOTIFICATION_KINDS, type EventNotificationKind } from '../../server/shared/notifications';
import { businesses } from './businesses';
import { sameBusinessFk } from './columns';
import { conversations } from './conversations';
import { oneOf } from './enums';
import { staff } from './staff';

export const NOTIFICATION_EMAIL_STATES = ['pending', 'sent', 'dropped'] as const;
export type NotificationEmailState = (typeof NOTIFICATION_EMAIL_STATES)[number];

/**
 * A staff member's notifications (docs/api.md#notifications): what the bell lists, what the browser
 * is told, and the emails waiting their turn. Written only by the event log's notifications handler
 * (server/services/notifications/handler.ts) in the dispatcher's transaction. One unread row per
 * staff member and conversation: what happens next in it (the client writes again, it is assigned
 * to them, they are mentioned) is folded into that row — its kind, words and event become the
 * latest, `count` grows — so the bell and the browser show one notification per conversation.
 * Opening the conversation reads it; a read row is history, and the next event starts a new one.
 */
export const notifications = pgTable(
  'notifications',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    staffId: integer('staff_id').notNull(),
    kind: text('kind').$type<EventNotificationKind>().notNull(),
    /** Null for what concerns no conversation (a webhook endpoint switched off). */
    conversationId: integer('conversation_id'),
    /**
     * The message it is about (the client's latest text, the note, the call; none for an assignment
     * that started a new round): read past it, the email is dropped.
     */
    messageId: bigint('message_id', { mode: 'number' }),
    /** The latest event folded in (a replayed event never is: notification_events below). */
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
    /**
     * A reply written from then on answers it (server/services/notifications/email.ts): the time of
     * its message's event, or of the event that began the round of its pending email.
     */
    replyAfter: timestamp('reply_after', { withTimezone: true }).notNull(),
    /** How many events it stands for. */
    count: integer('count').notNull().default(1),
    title: text('title').notNull(),
    body: text('body').notNull(),
    /** Shown in the bell (the staff member's in-app choice for its kind). */
    inApp: boolean('in_app').notNull(),
    /** The browser may show it (their choice, and they were available when it was written). */
    browser: boolean('browser').notNull(),
    /** An email planned: when it goes unless the conversation is read or answered first. */
    emailDueAt: timestamp('email_due_at', { withTimezone: true }),
    emailState: text('email_state').$type<(typeof NOTIFICATION_EMAIL_STATES)[number]>(),
    /** Why a planned email did not go (read, answered, away…), or the provider's error. */
    emailDetail: text('email_detail'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    readAt: timestamp('read_at', { withTimezone: true }),
  },
  (t) => [
    sameBusinessFk('notifications_staff_fk', t.businessId, t.staffId, staff).onDelete('cascade'),
    sameBusinessFk('notifications_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    // The row a conversation's next event folds into.
    uniqueIndex('notifications_unread_conversation_key')
      .on(t.staffId, t.conversationId)
      .where(sql`${t.readAt} is null and ${t.conversationId} is not null`),
    // The bell: a staff member's notifications, newest first; and its unread count.
    index('notifications_staff_idx').on(t.businessId, t.staffId, t.updatedAt.desc(), t.id.desc()),
    index('notifications_unread_idx')
      .on(t.businessId, t.staffId)
      .where(sql`${t.readAt} is null and ${t.inApp}`),
    // The email sender's queue.
    index('notifications_email_due_idx')
      .on(t.emailDueAt)
      .where(sql`${t.emailState} = 'pending'`),
    // Pruning: read notifications past NOTIFICATION_RETENTION_DAYS (server/services/notifications/prune.ts).
    index('notifications_read_idx')
      .on(t.readAt)
      .where(sql`${t.readAt} is not null`),
    check(
      'notifications_kind_check',
      oneOf(
        t.kind,
        NOTIFICATION_KINDS.filter((k) => k !== 'waiting_digest'),
      ),
    ),
    check('notifications_email_state_check', oneOf(t.emailState, NOTIFICATION_EMAIL_STATES)),
    check('notifications_email_check', sql`(${t.emailState} is null) = (${t.emailDueAt} is null)`),
    check('notifications_count_check', sql`${t.count} >= 1`),
  ],
);

/**
 * The events the notifications handler has taken (server/services/notifications/handler.ts), one row
 * each, written in its transaction: an event handed to it again (its cursor set back) finds its row
 * and tells nobody twice, whatever became of the notification it folded into (read, or of no
 * conversation). Needed only while the log can still hand the event over: pruned once the log no
 * longer holds it (./prune.ts).
 */
export const notificationEvents = pgTable('notification_events', {
  eventId: bigint('event_id', { mode: 'number' }).primaryKey(),
  businessId: integer('business_id')
    .notNull()
    .references(() => businesses.id, { onDelete: 'cascade' }),
});

/**
 * The waiting digests sent (docs/api.md#notifications): one row per email, naming the conversations
 * it listed; the digest job sends a staff member at most one per interval and never lists the same
 * waiting twice.
 */
export const notificationDigests = pgTable(
  'notification_digests',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    staffId: integer('staff_id').notNull(),
    conversationIds: integer('conversation_ids').array().notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull().defaultNow(),
    /** `sending` until the provider answers, then `sent as <Message-ID>` or `not sent: <the provider's error>`. */
    emailDetail: text('email_detail'),
  },
  (t) => [
    sameBusinessFk('notification_digests_staff_fk', t.businessId, t.staffId, staff).onDelete('cascade'),
    index('notification_digests_staff_idx').on(t.businessId, t.staffId, t.sentAt.desc()),
    // Pruning: digests past NOTIFICATION_RETENTION_DAYS.
    index('notification_digests_sent_idx').on(t.sentAt),
  ],
);
