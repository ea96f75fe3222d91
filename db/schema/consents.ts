import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { clients } from './clients';
import { sameBusinessFk, tenantKeys } from './columns';
import {
  CONSENT_CHANNELS,
  CONSENT_PURPOSES,
  CONSENT_SOURCES,
  CONSENT_STATUSES,
  oneOf,
  type ConsentChannel,
  type ConsentPurpose,
  type ConsentSource,
  type ConsentStatus,
} from './enums';
import { staff } from './staff';

/**
 * Consent records (docs/api.md#consent): what a client agreed to, or withdrew, per channel and
 * purpose, with when, how and in which words. Append-only: a client's consent for a channel and
 * purpose is the latest record by `recorded_at` (then id), and the earlier ones stay as the proof
 * 10DLC registration and complaints ask for. Read and written by server/services/compliance/consent.ts.
 */
export const consents = pgTable(
  'consents',
  {
    ...tenantKeys(),
    clientId: integer('client_id').notNull(),
    channel: text('channel').$type<ConsentChannel>().notNull(),
    purpose: text('purpose').$type<ConsentPurpose>().notNull(),
    status: text('status').$type<ConsentStatus>().notNull(),
    source: text('source').$type<ConsentSource>().notNull(),
    /** Free text: the form's wording, where the client said it, who witnessed it. */
    note: text('note'),
    /** When the client gave or withdrew it: never after created_at (an import may carry an earlier time). */
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
    /** The staff member who recorded it, for `staff` records. */
    recordedByStaffId: integer('recorded_by_staff_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    sameBusinessFk('consents_client_fk', t.businessId, t.clientId, clients).onDelete('cascade'),
    sameBusinessFk('consents_recorded_by_staff_fk', t.businessId, t.recordedByStaffId, staff),
    // The current consent of a client for a channel and purpose: the first row of this order.
    index('consents_current_idx').on(t.businessId, t.clientId, t.channel, t.purpose, t.recordedAt.desc(), t.id.desc()),
    check('consents_channel_check', oneOf(t.channel, CONSENT_CHANNELS)),
    check('consents_purpose_check', oneOf(t.purpose, CONSENT_PURPOSES)),
    check('consents_status_check', oneOf(t.status, CONSENT_STATUSES)),
    check('consents_source_check', oneOf(t.source, CONSENT_SOURCES)),
    check('consents_note_check', sql`${t.note} is null or char_length(${t.note}) <= 2000`),
    // Never dated after it was recorded: a record dated ahead would outrank every withdrawal made
    // until then, for good (writers clamp a few seconds of clock skew with least(…, now())).
    check('consents_recorded_at_check', sql`${t.recordedAt} <= ${t.createdAt}`),
  ],
);
