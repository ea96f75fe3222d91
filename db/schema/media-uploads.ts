import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { MMS_MAX_BYTES, MMS_UPLOAD_TYPES, type MmsUploadType } from '../../server/shared/limits';
import { apiKeys } from './auth';
import { bytea, sameBusinessFk, tenantKeys } from './columns';
import { oneOf } from './enums';
import { staff } from './staff';

/** Who can upload: the platform key, a business API key, or staff in the inbox. */
export const UPLOADERS = ['platform', 'api_key', 'staff'] as const;
export type Uploader = (typeof UPLOADERS)[number];

/**
 * Pictures uploaded for MMS (docs/api.md#mms-uploads), bytes and all, so that any web process can
 * serve them: to Twilio through a signed, expiring URL when a message naming them is sent, and to
 * the business's staff in the timeline. Messages refer to them by id in their attachments
 * (`media_id`); one upload may go with any number of messages.
 */
export const mediaUploads = pgTable(
  'media_uploads',
  {
    ...tenantKeys(),
    contentType: text('content_type').$type<MmsUploadType>().notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    /** Hex SHA-256 of the bytes: lets a caller check what we stored (and what Twilio was served). */
    sha256: text('sha256').notNull(),
    /** The name the file had on the uploader's side, if it said (multipart uploads); shown as the attachment's filename. */
    filename: text('filename'),
    bytes: bytea('bytes').notNull(),
    uploadedBy: text('uploaded_by').$type<Uploader>().notNull(),
    /** The staff member whose inbox session uploaded it. */
    staffId: integer('staff_id'),
    /** The business API key that uploaded it (kept if the key is revoked, cleared if it is deleted). */
    apiKeyId: integer('api_key_id').references(() => apiKeys.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    sameBusinessFk('media_uploads_staff_fk', t.businessId, t.staffId, staff),
    check('media_uploads_content_type_check', oneOf(t.contentType, MMS_UPLOAD_TYPES)),
    check(
      'media_uploads_size_check',
      sql`${t.sizeBytes} between 1 and ${sql.raw(String(MMS_MAX_BYTES))} and octet_length(${t.bytes}) = ${t.sizeBytes}`,
    ),
    check('media_uploads_sha256_check', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
    check('media_uploads_filename_check', sql`${t.filename} is null or char_length(${t.filename}) between 1 and 255`),
    check('media_uploads_uploaded_by_check', oneOf(t.uploadedBy, UPLOADERS)),
    check('media_uploads_staff_check', sql`(${t.uploadedBy} = 'staff') = (${t.staffId} is not null)`),
  ],
);
