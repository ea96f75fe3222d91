import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { clients } from './clients';
import {
  CHANNELS,
  CONVERSATION_STATUSES,
  NEEDS_ATTENTION_REASONS,
  oneOf,
  type Channel,
  type ConversationStatus,
  type NeedsAttentionReason,
} from './enums';
import { locations } from './locations';
import { staff } from './staff';
import { sameBusinessFk, tenantKeys } from './columns';

/**
 * One per business + client, across every channel. The last-message, unread and flagged fields are
 * denormalised so the inbox list is one index scan; they are only ever changed by relative
 * `UPDATE … SET unread_count = unread_count + 1` style statements so they stay exact under
 * concurrent writes.
 */
export const conversations = pgTable(
  'conversations',
  {
    ...tenantKeys(),
    clientId: integer('client_id').notNull(),
    locationId: integer('location_id'),
    status: text('status').$type<ConversationStatus>().notNull().default('open'),
    snoozedUntil: timestamp('snoozed_until', { withTimezone: true }),
    assignedStaffId: integer('assigned_staff_id'),
    resolvedByStaffId: integer('resolved_by_staff_id'),
    updatedByStaffId: integer('updated_by_staff_id'),
    label: text('label'),
    lastMessageId: bigint('last_message_id', { mode: 'number' }),
    lastMessageContent: text('last_message_content'),
    lastChannel: text('last_channel').$type<Channel>(),
    lastReadMessageId: bigint('last_read_message_id', { mode: 'number' }),
    unreadCount: integer('unread_count').notNull().default(0),
    flaggedCount: integer('flagged_count').notNull().default(0),
    /**
     * The client's latest text that reads like an opt-out without being a rule word ("please stop
     * texting me"), until staff confirm or dismiss it (docs/api.md#opt-out-wording): the inbox's
     * banner and its "possible opt-out" filter.
     */
    possibleOptOutMessageId: bigint('possible_opt_out_message_id', { mode: 'number' }),
    /**
     * Since when the client has been waiting for a reply (docs/api.md#waiting-for-a-reply): the time
     * of their first text or email after the last reply; null when answered. Together with
     * `status = 'open'` it is the one definition of "waiting" that assignment, alerts and reports use
     * (server/services/conversations/waiting.ts).
     */
    waitingSince: timestamp('waiting_since', { withTimezone: true }),
    /**
     * "Needs attention" (docs/api.md#needs-attention): why staff should look at this conversation, set
     * by the reply reader (a client's reply to an appointment reminder: `reschedule`, `cancel`,
     * `unclear`, `opt_out`), with its appointment and since when; null once staff act (resolve the
     * conversation, confirm or cancel the appointment). Not the message flag.
     */
    needsAttentionReason: text('needs_attention_reason').$type<NeedsAttentionReason>(),
    /** The appointment the reason is about (no foreign key: appointments are never deleted, only canceled). */
    needsAttentionAppointmentId: integer('needs_attention_appointment_id'),
    needsAttentionSince: timestamp('needs_attention_since', { withTimezone: true }),
    lastActivityAt: timestamp('last_activity_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('conversations_business_client_key').on(t.businessId, t.clientId),
    unique('conversations_business_id_id_key').on(t.businessId, t.id),
    // Every reference stays inside the business (and includes the distribution column Citus needs).
    sameBusinessFk('conversations_client_fk', t.businessId, t.clientId, clients).onDelete('cascade'),
    sameBusinessFk('conversations_location_fk', t.businessId, t.locationId, locations),
    sameBusinessFk('conversations_assigned_staff_fk', t.businessId, t.assignedStaffId, staff),
    sameBusinessFk('conversations_resolved_by_staff_fk', t.businessId, t.resolvedByStaffId, staff),
    sameBusinessFk('conversations_updated_by_staff_fk', t.businessId, t.updatedByStaffId, staff),
    // The inbox list: newest activity first, optionally narrowed by status or assignee.
    index('conversations_business_activity_idx').on(t.businessId, t.lastActivityAt.desc(), t.id.desc()),
    index('conversations_business_status_activity_idx').on(t.businessId, t.status, t.lastActivityAt.desc(), t.id.desc()),
    index('conversations_business_assignee_activity_idx').on(
      t.businessId,
      t.assignedStaffId,
      t.lastActivityAt.desc(),
      t.id.desc(),
    ),
    index('conversations_business_unread_idx')
      .on(t.businessId, t.lastActivityAt.desc(), t.id.desc())
      .where(sql`${t.unreadCount} > 0`),
    index('conversations_business_possible_opt_out_idx')
      .on(t.businessId, t.lastActivityAt.desc(), t.id.desc())
      .where(sql`${t.possibleOptOutMessageId} is not null`),
    // The inbox's Needs attention view.
    index('conversations_business_needs_attention_idx')
      .on(t.businessId, t.lastActivityAt.desc(), t.id.desc())
      .where(sql`${t.needsAttentionReason} is not null`),
    // Waiting conversations, per assignee (capacity, "balanced") and unassigned oldest first.
    index('conversations_waiting_idx')
      .on(t.businessId, t.assignedStaffId, t.waitingSince)
      .where(sql`${t.status} = 'open' and ${t.waitingSince} is not null`),
    // The snooze sweeper looks only at snoozed rows.
    index('conversations_snoozed_until_idx')
      .on(t.snoozedUntil)
      .where(sql`${t.status} = 'snoozed'`),
    check('conversations_status_check', oneOf(t.status, CONVERSATION_STATUSES)),
    check('conversations_last_channel_check', sql`${t.lastChannel} is null or ${oneOf(t.lastChannel, CHANNELS)}`),
    check('conversations_counts_check', sql`${t.unreadCount} >= 0 and ${t.flaggedCount} >= 0`),
    check(
      'conversations_needs_attention_check',
      sql`(${t.needsAttentionReason} is null) = (${t.needsAttentionSince} is null) and (${t.needsAttentionReason} is null or ${oneOf(t.needsAttentionReason, NEEDS_ATTENTION_REASONS)})`,
    ),
    check('conversations_label_check', sql`${t.label} is null or char_length(${t.label}) between 1 and 50`),
  ],
);
