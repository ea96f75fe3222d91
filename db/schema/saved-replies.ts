import { sql } from 'drizzle-orm';
import { check, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import {
  MAX_SAVED_REPLY_EMAIL_BODY,
  MAX_SAVED_REPLY_SMS_BODY,
  MAX_SAVED_REPLY_SUBJECT,
  MAX_SAVED_REPLY_TITLE,
  SAVED_REPLY_CHANNELS,
  type SavedReplyChannel,
} from '../../server/shared/templates';
import { tenantKeys } from './columns';
import { oneOf } from './enums';

/**
 * Saved replies (docs/api.md#saved-replies): a business's reusable texts with `{{variables}}`,
 * resolved per recipient when sent. `channel` null means any channel; an email-only reply may be
 * longer and carry a subject. Titles are unique per business, ignoring case, so the composer's
 * picker never shows two replies staff cannot tell apart.
 */
export const savedReplies = pgTable(
  'saved_replies',
  {
    ...tenantKeys(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    channel: text('channel').$type<SavedReplyChannel>(),
    subject: text('subject'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Titles are unique per business ignoring case; the list and the picker read in this order too.
    uniqueIndex('saved_replies_business_title_key').on(t.businessId, sql`lower(${t.title})`),
    check('saved_replies_channel_check', sql`${t.channel} is null or ${oneOf(t.channel, SAVED_REPLY_CHANNELS)}`),
    check('saved_replies_title_check', sql`char_length(${t.title}) between 1 and ${sql.raw(String(MAX_SAVED_REPLY_TITLE))}`),
    // An SMS (or any-channel) reply must fit one SMS body before resolution; email may be longer.
    check(
      'saved_replies_body_check',
      sql`char_length(${t.body}) between 1 and (case when ${t.channel} = 'email' then ${sql.raw(String(MAX_SAVED_REPLY_EMAIL_BODY))} else ${sql.raw(String(MAX_SAVED_REPLY_SMS_BODY))} end)`,
    ),
    // Only an email-only reply has a subject.
    check(
      'saved_replies_subject_check',
      sql`${t.subject} is null or (${t.channel} = 'email' and char_length(${t.subject}) between 1 and ${sql.raw(String(MAX_SAVED_REPLY_SUBJECT))})`,
    ),
  ],
);
