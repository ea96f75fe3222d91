import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/db/client';
import { mediaUploads, type StoredAttachment, type Uploader } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { Caller } from '@/server/services/auth';
import { MMS_MAX_BYTES, MMS_UPLOAD_TYPES, type MmsUploadType } from '@/server/shared/limits';

/**
 * MMS uploads (docs/api.md#mms-uploads): pictures a business stores with us so that its texts can
 * carry them. Stored whole in PostgreSQL (media_uploads), so any web process serves them; queue
 * items name them by `media_ids`, and each becomes an attachment of the message (`media_id`),
 * handed to Twilio at send time as a signed URL of ours (media-links.ts). Every read is by
 * (business, id).
 */

/** File signatures: the bytes decide what a picture is, whatever the request said. */
const SIGNATURES: { type: MmsUploadType; starts: Buffer[] }[] = [
  { type: 'image/jpeg', starts: [Buffer.from([0xff, 0xd8, 0xff])] },
  { type: 'image/png', starts: [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])] },
  { type: 'image/gif', starts: [Buffer.from('GIF87a'), Buffer.from('GIF89a')] },
];

/** Declared types that say nothing about the file: the bytes decide alone. */
const UNTYPED = new Set(['', 'application/octet-stream', 'text/plain' /* busboy's name for a part without a type */]);
/** Names some senders use for JPEG. */
const ALIASES: Record<string, MmsUploadType> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg' };

const EXTENSIONS: Record<MmsUploadType, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/gif': 'gif' };

const ALLOWED = 'JPEG, PNG or GIF';

function sniff(bytes: Buffer): MmsUploadType | null {
  return SIGNATURES.find((s) => s.starts.some((start) => bytes.subarray(0, start.length).equals(start)))?.type ?? null;
}

/**
 * What an upload is: one of MMS_UPLOAD_TYPES by its bytes, and, when the request named a type, that
 * same one. 415 otherwise, naming what was wrong.
 */
export function uploadType(bytes: Buffer, declaredType: string): MmsUploadType {
  const declared = ALIASES[declaredType] ?? declaredType;
  if (!UNTYPED.has(declared) && !(MMS_UPLOAD_TYPES as readonly string[]).includes(declared)) {
    throw new AppError('unsupported_media_type', `${declared} cannot be sent by MMS here: upload a ${ALLOWED} picture`);
  }
  const actual = sniff(bytes);
  if (!actual) throw new AppError('unsupported_media_type', `The file is not a ${ALLOWED} picture`);
  if (!UNTYPED.has(declared) && declared !== actual) {
    throw new AppError('unsupported_media_type', `The file was sent as ${declared} but is ${actual}`);
  }
  return actual;
}

function uploaderOf(caller: Caller): { uploadedBy: Uploader; staffId: number | null; apiKeyId: number | null } {
  switch (caller.kind) {
    case 'session':
      return { uploadedBy: 'staff', staffId: caller.staffId, apiKeyId: null };
    case 'business_key':
      return { uploadedBy: 'api_key', staffId: null, apiKeyId: caller.apiKeyId };
    case 'platform':
      return { uploadedBy: 'platform', staffId: null, apiKeyId: null };
  }
}

type Row = typeof mediaUploads.$inferSelect;

function toMediaUpload(r: Pick<Row, 'id' | 'contentType' | 'sizeBytes' | 'sha256' | 'filename' | 'createdAt'>) {
  return {
    media_id: r.id,
    content_type: r.contentType,
    size: r.sizeBytes,
    sha256: r.sha256,
    filename: r.filename,
    created_at: r.createdAt.toISOString(),
  };
}

/** Stores one picture for the business; what the caller needs to send it (its media_id) and to check it (sha256). */
export async function storeUpload(
  businessId: number,
  file: { bytes: Buffer; declaredType: string; filename: string | null },
  caller: Caller,
) {
  if (file.bytes.length === 0) throw AppError.invalid(['body'], 'The file is empty');
  if (file.bytes.length > MMS_MAX_BYTES) {
    throw new AppError(
      'payload_too_large',
      `The file is over ${MMS_MAX_BYTES.toLocaleString('en-US')} bytes (Twilio's 5 MB per MMS)`,
    );
  }
  const contentType = uploadType(file.bytes, file.declaredType);
  const [row] = await db
    .insert(mediaUploads)
    .values({
      businessId,
      contentType,
      sizeBytes: file.bytes.length,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
      filename: file.filename,
      bytes: file.bytes,
      ...uploaderOf(caller),
    })
    .returning();
  return toMediaUpload(row!);
}
export type MediaUploadOut = Awaited<ReturnType<typeof storeUpload>>;

/** An upload's bytes and type, for the business that owns it; 404 for any other id. */
export async function uploadedMedia(businessId: number, mediaId: number) {
  const [row] = await db
    .select({ bytes: mediaUploads.bytes, contentType: mediaUploads.contentType, filename: mediaUploads.filename })
    .from(mediaUploads)
    .where(and(eq(mediaUploads.businessId, businessId), eq(mediaUploads.id, mediaId)));
  if (!row) throw AppError.notFound('Media');
  return row;
}

type MmsItem = { media_urls?: string[]; media_ids?: number[] };

/**
 * Every queue item's MMS media as the message's attachments, in the order given (media_urls, then
 * media_ids), keyed by item index. Uploads are looked up in one query for the whole request: an id
 * this business does not have is a 422 at `messages[i].media_ids[j]`, and one message's uploads
 * together over MMS_MAX_BYTES a 422 at `messages[i].media_ids`.
 */
export async function mmsAttachments(
  conn: Tx,
  businessId: number,
  // Any queue item (an email's, a record item's): only an SMS queue item has these fields.
  items: { item: object; index: number }[],
  issues: ValidationIssue[],
): Promise<Map<number, StoredAttachment[]>> {
  const mms = items.map(({ item, index }) => ({ item: item as MmsItem, index }));
  const ids = [...new Set(mms.flatMap(({ item }) => item.media_ids ?? []))];
  const found = new Map<number, Pick<Row, 'id' | 'contentType' | 'sizeBytes' | 'filename'>>();
  if (ids.length) {
    const rows = await conn
      .select({
        id: mediaUploads.id,
        contentType: mediaUploads.contentType,
        sizeBytes: mediaUploads.sizeBytes,
        filename: mediaUploads.filename,
      })
      .from(mediaUploads)
      .where(and(eq(mediaUploads.businessId, businessId), equalsAny(mediaUploads.id, ids, 'int')));
    rows.forEach((r) => found.set(r.id, r));
  }
  const result = new Map<number, StoredAttachment[]>();
  for (const { item, index } of mms) {
    const attachments: StoredAttachment[] = (item.media_urls ?? []).map((url, i) => ({
      filename: `media-${i}`,
      content_type: null,
      url,
      size: null,
    }));
    let total = 0;
    (item.media_ids ?? []).forEach((id, j) => {
      const upload = found.get(id);
      if (!upload) {
        issues.push({
          loc: ['body', 'messages', index, 'media_ids', j],
          msg: `Media ${id} not found in this business`,
          type: 'value_error',
        });
        return;
      }
      total += upload.sizeBytes;
      const position = attachments.length;
      attachments.push({
        filename: upload.filename ?? `media-${position}.${EXTENSIONS[upload.contentType]}`,
        content_type: upload.contentType,
        url: null,
        size: upload.sizeBytes,
        media_id: upload.id,
      });
    });
    if (total > MMS_MAX_BYTES) {
      issues.push({
        loc: ['body', 'messages', index, 'media_ids'],
        msg: `together ${total.toLocaleString('en-US')} bytes: one MMS carries at most ${MMS_MAX_BYTES.toLocaleString('en-US')} (Twilio's 5 MB)`,
        type: 'value_error',
      });
    }
    if (attachments.length) result.set(index, attachments);
  }
  return result;
}
