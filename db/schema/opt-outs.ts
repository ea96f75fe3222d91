import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sameBusinessFk, tenantKeys } from './columns';
import {
  OPT_OUT_ACTIONS,
  OPT_OUT_CHANNELS,
  OPT_OUT_EVENT_SOURCES,
  OPT_OUT_SOURCES,
  oneOf,
  type OptOutAction,
  type OptOutChannel,
  type OptOutEventSource,
  type OptOutSource,
} from './enums';
import { messages } from './messages';
import { staff } from './staff';

/**
 * Suppression (docs/api.md#opt-out): an address of a business that must not get that channel any
 * more, whichever client row carries it (a family sharing a phone, a duplicate import). Every send
 * path checks it by the message's recipient address (server/services/messages/suppression.ts).
 * This is the current state, one row per opted-out address: the send path's check is one probe of
 * its unique key. Opting back in removes the row, in the same statement that appends the opt-in to
 * `opt_out_events`, so a row exists exactly when the address's latest history record is an opt-out.
 */
export const optOuts = pgTable(
  'opt_outs',
  {
    ...tenantKeys(),
    channel: text('channel').$type<OptOutChannel>().notNull(),
    /** E.164 for `sms`, lower-cased for `email`: compared as is with `messages.to_address`. */
    address: text('address').notNull(),
    source: text('source').$type<OptOutSource>().notNull(),
    /** The message that caused it (the STOP, the refused send, the bounced email), when one did. */
    messageId: bigint('message_id', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // The one lookup of every send: (business, channel, recipient).
    uniqueIndex('opt_outs_business_channel_address_key').on(t.businessId, t.channel, t.address),
    // Deleting a client's messages clears their references here (ON DELETE SET NULL (message_id)).
    sameBusinessFk('opt_outs_message_fk', t.businessId, t.messageId, messages).onDelete('set null'),
    index('opt_outs_message_idx')
      .on(t.businessId, t.messageId)
      .where(sql`${t.messageId} is not null`),
    check('opt_outs_channel_check', oneOf(t.channel, OPT_OUT_CHANNELS)),
    check('opt_outs_source_check', oneOf(t.source, OPT_OUT_SOURCES)),
  ],
);

/**
 * The opt-out history of an address (docs/api.md#opt-out): every opt-out and every opt-in, who
 * (the staff member, when one acted), when, how (`source`) and why (`note`, the cause `message_id`).
 * Append-only; written only together with the `opt_outs` change it records (suppression.ts), and
 * only when the state changed (a second STOP while opted out adds nothing).
 */
export const optOutEvents = pgTable(
  'opt_out_events',
  {
    ...tenantKeys(),
    channel: text('channel').$type<OptOutChannel>().notNull(),
    /** The stored form, as in `opt_outs.address`. */
    address: text('address').notNull(),
    action: text('action').$type<OptOutAction>().notNull(),
    /** An opt-out's source; an opt-in's: `keyword` (START…), how the client asked, or `staff` / `api`. */
    source: text('source').$type<OptOutEventSource>().notNull(),
    note: text('note'),
    /** The staff member who did it (a session's own, or named by an API key). */
    staffId: integer('staff_id'),
    /** The message that caused it (STOP, START, the refused send, the text staff confirmed), while it exists. */
    messageId: bigint('message_id', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // A client's history: the records of their phone number and email address, newest first.
    index('opt_out_events_address_idx').on(t.businessId, t.channel, t.address, t.id.desc()),
    // The deliverability report's opt-outs by when they were recorded.
    index('opt_out_events_business_created_idx')
      .on(t.businessId, t.createdAt)
      .where(sql`${t.action} = 'opt_out'`),
    sameBusinessFk('opt_out_events_staff_fk', t.businessId, t.staffId, staff),
    sameBusinessFk('opt_out_events_message_fk', t.businessId, t.messageId, messages).onDelete('set null'),
    // Deleting messages finds their references here through this index.
    index('opt_out_events_message_idx')
      .on(t.businessId, t.messageId)
      .where(sql`${t.messageId} is not null`),
    check('opt_out_events_channel_check', oneOf(t.channel, OPT_OUT_CHANNELS)),
    check('opt_out_events_action_check', oneOf(t.action, OPT_OUT_ACTIONS)),
    check('opt_out_events_source_check', oneOf(t.source, OPT_OUT_EVENT_SOURCES)),
    check('opt_out_events_note_check', sql`${t.note} is null or char_length(${t.note}) <= 2000`),
  ],
);
