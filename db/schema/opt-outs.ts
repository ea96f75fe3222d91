import { sql } from 'drizzle-orm';
import { bigint, check, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sameBusinessFk, tenantKeys } from './columns';
import { OPT_OUT_CHANNELS, OPT_OUT_SOURCES, oneOf, type OptOutChannel, type OptOutSource } from './enums';
import { messages } from './messages';

/**
 * Suppression (docs/api.md#opt-out): an address of a business that must not get that channel any
 * more, whichever client row carries it (a family sharing a phone, a duplicate import). Every send
 * path checks it by the message's recipient address (server/services/messages/suppression.ts);
 * opting back in (START) deletes the row: the STOP and START messages themselves are the history.
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
