import { sql } from 'drizzle-orm';
import { bigint, check, foreignKey, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { MMS_MAX_BYTES, MMS_UPLOAD_TYPES, type MmsUploadType } from '../../server/shared/limits';
import { apiKeys } from './auth';
import { businesses } from './businesses';
import { bytea, sameBusinessFk, tenantKeys } from './columns';
import { oneOf } from './enums';
import { staff } from './staff';

/** Who can upload: the platform key, a business API key, or staff in the inbox. */
export const UPLOADERS = ['platform', 'api_key', 'staff'] as const;
export type Uploader = (typeof UPLOADERS)[number];

/**
 * The bytes of a business's MMS uploads, once per distinct content (docs/api.md#mms-uploads): the
 * same picture uploaded again is stored once, its uploads all refer to it by (business_id, sha256).
 * Kept while an upload refers to it; counted in media_storage.
 */
export const mediaContents = pgTable(
  'media_contents',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    /** Hex SHA-256 of the bytes. */
    sha256: text('sha256').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    bytes: bytea('bytes').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'media_contents_pkey', columns: [t.businessId, t.sha256] }),
    check(
      'media_contents_size_check',
      sql`${t.sizeBytes} between 1 and ${sql.raw(String(MMS_MAX_BYTES))} and octet_length(${t.bytes}) = ${t.sizeBytes}`,
    ),
    check('media_contents_sha256_check', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
  ],
);

/**
 * What a business's uploads take in storage: the sum of its media_contents' sizes, held to
 * MEDIA_STORAGE_QUOTA_BYTES. The row is also the business's storage lock: every writer of its
 * media_contents (an upload, the cleanup) locks it first, in the transaction that changes both.
 */
export const mediaStorage = pgTable(
  'media_storage',
  {
    businessId: integer('business_id')
      .primaryKey()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    storedBytes: bigint('stored_bytes', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('media_storage_stored_bytes_check', sql`${t.storedBytes} >= 0`)],
);

/**
 * Pictures uploaded for MMS (docs/api.md#mms-uploads), so that any web process can serve them: to
 * Twilio through a signed, expiring URL when a message naming them is sent, and to the business's
 * staff in the timeline. Messages refer to them by id in their attachments (`media_id`); one upload
 * may go with any number of messages. Each upload has its own id; its bytes are its content's.
 */
export const mediaUploads = pgTable(
  'media_uploads',
  {
    ...tenantKeys(),
    contentType: text('content_type').$type<MmsUploadType>().notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    /** Hex SHA-256 of the bytes: lets a caller check what we stored (and what Twilio was served); names the content. */
    sha256: text('sha256').notNull(),
    /** The name the file had on the uploader's side, if it said (multipart uploads); shown as the attachment's filename. */
    filename: text('filename'),
    uploadedBy: text('uploaded_by').$type<Uploader>().notNull(),
    /** The staff member whose inbox session uploaded it. */
    staffId: integer('staff_id'),
    /** The business API key that uploaded it (kept if the key is revoked, cleared if it is deleted). */
    apiKeyId: integer('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * When a message first named it, in the transaction that stored the message; null until then.
     * An upload still null a day after it was made is deleted by the worker's maintenance.
     */
    attachedAt: timestamp('attached_at', { withTimezone: true }),
  },
  (t) => [
    sameBusinessFk('media_uploads_staff_fk', t.businessId, t.staffId, staff),
    foreignKey({
      name: 'media_uploads_content_fk',
      columns: [t.businessId, t.sha256],
      foreignColumns: [mediaContents.businessId, mediaContents.sha256],
    }),
    // The cleanup's check that no upload refers to a content any more, and the foreign key's own.
    index('media_uploads_content_idx').on(t.businessId, t.sha256),
    // The cleanup's scan: uploads no message has named, oldest first.
    index('media_uploads_unattached_idx')
      .on(t.createdAt)
      .where(sql`${t.attachedAt} is null`),
    check('media_uploads_content_type_check', oneOf(t.contentType, MMS_UPLOAD_TYPES)),
    check('media_uploads_size_check', sql`${t.sizeBytes} between 1 and ${sql.raw(String(MMS_MAX_BYTES))}`),
    check('media_uploads_sha256_check', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
    check('media_uploads_filename_check', sql`${t.filename} is null or char_length(${t.filename}) between 1 and 255`),
    check('media_uploads_uploaded_by_check', oneOf(t.uploadedBy, UPLOADERS)),
    check('media_uploads_staff_check', sql`(${t.uploadedBy} = 'staff') = (${t.staffId} is not null)`),
  ],
);
