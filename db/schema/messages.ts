import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { clients } from './clients';
import { conversations } from './conversations';
import {
  CHANNELS,
  DIRECTIONS,
  MESSAGE_CATEGORIES,
  MESSAGE_ORIGINS,
  MESSAGE_STATUSES,
  MESSAGE_TYPES,
  NOTIFICATION_TYPES,
  PROVIDERS,
  USER_TYPES,
  oneOf,
  type Channel,
  type Direction,
  type MessageCategory,
  type MessageOrigin,
  type MessageStatus,
  type MessageType,
  type NotificationType,
  type Provider,
  type UserType,
} from './enums';
import { staff } from './staff';
import { sameBusinessFk } from './columns';

export type QuietHoursWindow = { time_zone: string; start: number; end: number };

export type StoredAttachment = {
  filename: string;
  content_type: string | null;
  url: string | null;
  size: number | null;
  content?: string;
  /** An MMS picture we store (media_uploads.id, same business): sent to Twilio as a signed URL of ours. */
  media_id?: number;
};

/** One SMS, email, call or internal note. Every status change moves forward only (docs/api.md#monotonic-updates). */
export const messages = pgTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    clientId: integer('client_id').notNull(),
    channel: text('channel').$type<Channel>(),
    direction: text('direction').$type<Direction>().notNull(),
    messageType: text('message_type').$type<MessageType>().notNull(),
    category: text('category').$type<MessageCategory>().notNull().default('conversational'),
    notificationType: text('notification_type').$type<NotificationType>(),
    senderType: text('sender_type').$type<UserType>().notNull(),
    senderId: integer('sender_id'),
    receiverType: text('receiver_type').$type<UserType>(),
    receiverId: integer('receiver_id'),
    /** The staff member who wrote or placed it (notes, calls, staff sends). */
    staffId: integer('staff_id'),
    sentBy: integer('sent_by'),
    wlUserId: integer('wl_user_id'),
    content: text('content'),
    subject: text('subject'),
    fromAddress: text('from_address'),
    toAddress: text('to_address'),
    cc: jsonb('cc').$type<string[]>(),
    bcc: jsonb('bcc').$type<string[]>(),
    attachments: jsonb('attachments').$type<StoredAttachment[]>(),
    status: text('status').$type<MessageStatus>().notNull(),
    /**
     * How it came to be (enums.ts MESSAGE_ORIGINS). No default: every writer says. The send claim and
     * the recovery sweep take only SENDABLE_ORIGINS, so a recorded message never becomes a send.
     */
    origin: text('origin').$type<MessageOrigin>().notNull(),
    provider: text('provider').$type<Provider>(),
    providerMessageId: text('provider_message_id'),
    /**
     * Provider ids of earlier attempts (a retry or re-queue clears provider_message_id): never
     * matched by a status callback, only kept so reconciliation does not take an earlier attempt
     * for the current one.
     */
    previousProviderMessageIds: text('previous_provider_message_ids').array(),
    providerMetadata: jsonb('provider_metadata').$type<Record<string, unknown>>(),
    /** RFC 5322 Message-ID of an email we sent or received: threads replies. */
    emailMessageId: text('email_message_id'),
    inReplyTo: text('in_reply_to'),
    requestId: uuid('request_id'),
    responseId: bigint('response_id', { mode: 'number' }),
    isRead: boolean('is_read').notNull().default(false),
    flagged: boolean('flagged').notNull().default(false),
    recordingUrl: text('recording_url'),
    callDurationSeconds: integer('call_duration_seconds'),
    /** `missed` or `voicemail` for inbound calls nobody answered. */
    callOutcome: text('call_outcome'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    attempts: integer('attempts').notNull().default(0),
    segments: integer('segments'),
    encoding: text('encoding'),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * Send later (docs/api.md#send-later): when a `scheduled` message is due. Kept after it goes out,
     * when `sent_at` becomes the moment it was claimed for sending: the difference is the delay.
     */
    sendAt: timestamp('send_at', { withTimezone: true }),
    /** A scheduled message is canceled when the client writes in before it goes (off per message). */
    cancelOnReply: boolean('cancel_on_reply').notNull().default(true),
    /**
     * Quiet hours (docs/api.md#quiet-hours): the recipient's sending window an automated text keeps
     * to (their time zone, minutes of the day); null for a message not held by quiet hours. The send
     * worker re-checks it, so a scheduled text whose moment passed while the worker was down waits
     * for the next opening instead of going out at night.
     */
    quietHours: jsonb('quiet_hours').$type<QuietHoursWindow>(),
    /** Why a message is `scheduled` other than by choice: `quiet_hours`. */
    holdReason: text('hold_reason').$type<'quiet_hours'>(),
    statusUpdatedAt: timestamp('status_updated_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // A conversation's timeline, newest first; also serves search within one conversation.
    index('messages_conversation_sent_idx').on(t.conversationId, t.sentAt.desc(), t.id.desc()),
    index('messages_request_idx')
      .on(t.requestId)
      .where(sql`${t.requestId} is not null`),
    // A provider's id is unique per business: Twilio's SIDs are global anyway; an inbound email's
    // Message-ID (its sender's choice) may reach several businesses. Lookups by (provider, id) use the prefix.
    // Partial: a message gets its provider id when sent, so a queued message (a bulk request's
    // thousand) has no entry to write until then.
    uniqueIndex('messages_provider_id_key')
      .on(t.provider, t.providerMessageId, t.businessId)
      .where(sql`${t.providerMessageId} is not null`),
    // The target of references from inside the business (opt_outs.message_id).
    unique('messages_business_id_id_key').on(t.businessId, t.id),
    // References stay inside the business (and carry the distribution column Citus needs).
    sameBusinessFk('messages_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    sameBusinessFk('messages_client_fk', t.businessId, t.clientId, clients).onDelete('cascade'),
    sameBusinessFk('messages_staff_fk', t.businessId, t.staffId, staff),
    // A late status callback for an earlier attempt of a retried message is recognised as such.
    index('messages_previous_provider_ids_idx')
      .using('gin', t.previousProviderMessageIds)
      .where(sql`${t.previousProviderMessageIds} is not null`),
    // Sends in flight: the worker's sweep finds a message stuck `queued`/`sending` (its job lost or exhausted).
    index('messages_in_flight_idx')
      .on(t.statusUpdatedAt)
      .where(sql`${t.status} in ('queued', 'sending')`),
    // Cancel on reply: an inbound message finds its conversation's scheduled messages.
    index('messages_scheduled_conversation_idx')
      .on(t.businessId, t.conversationId)
      .where(sql`${t.status} = 'scheduled'`),
    // The deliverability report's failures (docs/api.md#reports): partial, so only a failed message
    // has an entry; status updates are not HOT anyway (messages_in_flight_idx keys status_updated_at).
    index('messages_business_failed_idx')
      .on(t.businessId, t.sentAt)
      .where(sql`${t.direction} = 'outbound' and ${t.status} in ('failed', 'undelivered', 'bounced')`),
    index('messages_business_email_message_id_idx')
      .on(t.businessId, t.emailMessageId)
      .where(sql`${t.emailMessageId} is not null`),
    // Trigram search over content and subject lives in message_search (below).
    check('messages_channel_check', sql`${t.channel} is null or ${oneOf(t.channel, CHANNELS)}`),
    check('messages_direction_check', oneOf(t.direction, DIRECTIONS)),
    check('messages_message_type_check', oneOf(t.messageType, MESSAGE_TYPES)),
    check('messages_category_check', oneOf(t.category, MESSAGE_CATEGORIES)),
    check(
      'messages_notification_type_check',
      sql`${t.notificationType} is null or ${oneOf(t.notificationType, NOTIFICATION_TYPES)}`,
    ),
    check('messages_sender_type_check', oneOf(t.senderType, USER_TYPES)),
    check('messages_receiver_type_check', sql`${t.receiverType} is null or ${oneOf(t.receiverType, USER_TYPES)}`),
    check('messages_status_check', oneOf(t.status, MESSAGE_STATUSES)),
    check('messages_origin_check', oneOf(t.origin, MESSAGE_ORIGINS)),
    check('messages_hold_reason_check', sql`${t.holdReason} is null or ${t.holdReason} = 'quiet_hours'`),
    check('messages_provider_check', sql`${t.provider} is null or ${oneOf(t.provider, PROVIDERS)}`),
    // Notes have no channel; every other message has one.
    check('messages_note_channel_check', sql`(${t.messageType} = 'NOTE') = (${t.channel} is null)`),
  ],
);

/**
 * gin_pending_list_limit of the search indexes, in kB: 16 MB, about twelve 1,000-message requests.
 * At PostgreSQL's default (4 MB, three requests) the bulk request that crossed it merged the whole
 * list before answering, which made one request in three slow (bench:send, docs/performance.md#benchsend).
 */
export const SEARCH_PENDING_LIST_KB = 16384;

/**
 * The searchable text of every message, with the indexes of business-wide search (docs/api.md#search,
 * docs/architecture.md#search-texts). Kept by triggers on `messages` (migrations 0017–0019): a row
 * is written when its message is, again only when its content, subject, sent_at or type change, and
 * deleted with its message (a trigger, not a foreign key: a foreign key would check every row of a
 * 1,000-message insert, rows the trigger itself just took from the new messages). In a table of
 * their own, the search indexes are not written again on every status change: any UPDATE of a
 * message's status is a non-HOT update (status is in partial index predicates), which re-inserted
 * ~60 trigram entries per message into the GIN on each of a send's two or more updates.
 *
 * The texts are stored folded (`lower()`, as ILIKE folds both sides): a search compares with LIKE
 * and does not fold each row it reads again, which was most of the cost of walking a common term.
 */
export const messageSearch = pgTable(
  'message_search',
  {
    messageId: bigint('message_id', { mode: 'number' }).primaryKey(),
    businessId: integer('business_id').notNull(),
    /** The message's sent_at: search answers newest first. */
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull(),
    /** An internal note (message_type NOTE): the REST search leaves notes out. */
    isNote: boolean('is_note').notNull(),
    /** lower(messages.content). */
    contentLower: text('content_lower'),
    /** lower(messages.subject). */
    subjectLower: text('subject_lower'),
  },
  (t) => [
    // Scoped by business (btree_gin); subjects only where there is one (emails): texts have none.
    // Their pending lists hold 16 MB before an insert must merge them (migration 0020): the worker
    // merges them every second (mergeSearchIndexPendingLists), so a request does not have to.
    index('message_search_content_trgm_idx')
      .using('gin', t.businessId, sql`${t.contentLower} gin_trgm_ops`)
      .with({ gin_pending_list_limit: SEARCH_PENDING_LIST_KB }),
    index('message_search_subject_trgm_idx')
      .using('gin', t.businessId, sql`${t.subjectLower} gin_trgm_ops`)
      .with({ gin_pending_list_limit: SEARCH_PENDING_LIST_KB })
      .where(sql`${t.subjectLower} is not null`),
    // A business's texts newest first: the search walks it for common terms (server/services/search.ts,
    // shape `walk`), stopping once it has a page and the capped total.
    index('message_search_business_sent_idx').on(t.businessId, t.sentAt.desc(), t.messageId.desc()),
  ],
);
