import { createHash } from 'node:crypto';
import { and, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { mediaContents, mediaStorage, mediaUploads, type StoredAttachment, type Uploader } from '@/db/schema';
import { env } from '@/server/env';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { Caller } from '@/server/services/auth';
import { MMS_MAX_BYTES, MMS_UPLOAD_TYPES, type MmsUploadType } from '@/server/shared/limits';

/**
 * MMS uploads (docs/api.md#mms-uploads): pictures a business stores with us so that its texts can
 * carry them. Stored whole in PostgreSQL, so any web process serves them: each upload is a row of
 * its own (media_uploads, its own media_id), its bytes are stored once per business and content
 * (media_contents, by SHA-256), and what a business stores is held to MEDIA_STORAGE_QUOTA_BYTES
 * (media_storage). Queue items name uploads by `media_ids`, and each becomes an attachment of the
 * message (`media_id`), handed to Twilio at send time as a signed URL of ours (media-links.ts).
 * An upload no message names is deleted a day after it was made (deleteUnattachedUploads). Every
 * read is by (business, id).
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

/**
 * Locks the business's storage row (creating it at 0 the first time) and answers what it stores.
 * Every writer of the business's media_contents calls this first in its transaction, so uploads of
 * one business and the cleanup of its contents run one at a time: the quota check, the content row
 * and the count change together, and two uploads of the same bytes at once store them once.
 */
async function lockStorage(businessId: number, tx: Tx): Promise<number> {
  await tx.insert(mediaStorage).values({ businessId }).onConflictDoNothing();
  const [row] = await tx
    .select({ storedBytes: mediaStorage.storedBytes })
    .from(mediaStorage)
    .where(eq(mediaStorage.businessId, businessId))
    .for('update');
  return row!.storedBytes;
}

const bytesText = (n: number) => n.toLocaleString('en-US');

/**
 * Stores one picture for the business; what the caller needs to send it (its media_id) and to check
 * it (sha256). Bytes the business already stores are not stored again (the upload still gets its
 * own id); new bytes that would take the business past MEDIA_STORAGE_QUOTA_BYTES are a 507.
 */
export async function storeUpload(
  businessId: number,
  file: { bytes: Buffer; declaredType: string; filename: string | null },
  caller: Caller,
  quotaBytes = env().mediaStorageQuotaBytes,
  tx: Tx = db,
) {
  if (file.bytes.length === 0) throw AppError.invalid(['body'], 'The file is empty');
  if (file.bytes.length > MMS_MAX_BYTES) {
    throw new AppError(
      'payload_too_large',
      `The file is over ${MMS_MAX_BYTES.toLocaleString('en-US')} bytes (Twilio's 5 MB per MMS)`,
    );
  }
  const contentType = uploadType(file.bytes, file.declaredType);
  const sha256 = createHash('sha256').update(file.bytes).digest('hex');
  const size = file.bytes.length;
  const row = await tx.transaction(async (tx) => {
    const stored = await lockStorage(businessId, tx);
    // Read under the lock: no other writer of this business's contents runs until we commit.
    const [known] = await tx
      .select({ sha256: mediaContents.sha256 })
      .from(mediaContents)
      .where(and(eq(mediaContents.businessId, businessId), eq(mediaContents.sha256, sha256)));
    if (!known) {
      if (stored + size > quotaBytes) {
        throw new AppError(
          'insufficient_storage',
          `Storage quota reached: this business's uploads take ${bytesText(stored)} of the ${bytesText(quotaBytes)} bytes ` +
            `a business may store (MEDIA_STORAGE_QUOTA_BYTES), and this file needs ${bytesText(size)} more. ` +
            'Uploads no message names are deleted a day after they were made.',
        );
      }
      await tx.insert(mediaContents).values({ businessId, sha256, sizeBytes: size, bytes: file.bytes });
      await tx
        .update(mediaStorage)
        .set({ storedBytes: sql`${mediaStorage.storedBytes} + ${size}` })
        .where(eq(mediaStorage.businessId, businessId));
    }
    const [inserted] = await tx
      .insert(mediaUploads)
      .values({ businessId, contentType, sizeBytes: size, sha256, filename: file.filename, ...uploaderOf(caller) })
      .returning();
    return inserted!;
  });
  return toMediaUpload(row);
}
export type MediaUploadOut = Awaited<ReturnType<typeof storeUpload>>;

/** An upload's bytes and type, for the business that owns it; 404 for any other id. */
export async function uploadedMedia(businessId: number, mediaId: number, tx: Tx = db) {
  const [row] = await tx
    .select({ bytes: mediaContents.bytes, contentType: mediaUploads.contentType, filename: mediaUploads.filename })
    .from(mediaUploads)
    .innerJoin(
      mediaContents,
      and(eq(mediaContents.businessId, mediaUploads.businessId), eq(mediaContents.sha256, mediaUploads.sha256)),
    )
    .where(and(eq(mediaUploads.businessId, businessId), eq(mediaUploads.id, mediaId)));
  if (!row) throw AppError.notFound('Media');
  return row;
}

/**
 * Marks the uploads the messages being stored name as attached, in the transaction that stores
 * them, so the cleanup never deletes an upload a message names. An upload the cleanup deleted
 * since the request was checked (it was a day old and never named) is a 422 at its place, and the
 * messages are not stored. Only uploads not yet attached are written (and locked): a campaign that
 * names one picture in many requests does not queue them behind each other on its row.
 */
export async function attachUploads(businessId: number, mms: Map<number, StoredAttachment[]>, tx: Tx): Promise<void> {
  const ids = [
    ...new Set([...mms.values()].flatMap((list) => list.flatMap((a) => (a.media_id === undefined ? [] : [a.media_id])))),
  ];
  if (!ids.length) return;
  // A concurrent cleanup that got the row first has deleted it (the update skips it); one that
  // comes after sees it attached and leaves it.
  const marked = await tx
    .update(mediaUploads)
    .set({ attachedAt: sql`now()` })
    .where(and(eq(mediaUploads.businessId, businessId), equalsAny(mediaUploads.id, ids, 'int'), isNull(mediaUploads.attachedAt)))
    .returning({ id: mediaUploads.id });
  const found = new Set(marked.map((r) => r.id));
  const rest = ids.filter((id) => !found.has(id));
  if (rest.length) {
    const attached = await tx
      .select({ id: mediaUploads.id })
      .from(mediaUploads)
      .where(
        and(eq(mediaUploads.businessId, businessId), equalsAny(mediaUploads.id, rest, 'int'), isNotNull(mediaUploads.attachedAt)),
      );
    attached.forEach((r) => found.add(r.id));
  }
  const issues: ValidationIssue[] = [];
  for (const [index, attachments] of mms) {
    attachments
      .filter((a) => a.media_id !== undefined)
      .forEach((a, j) => {
        if (!found.has(a.media_id!)) {
          issues.push({
            loc: ['body', 'messages', index, 'media_ids', j],
            msg: `Media ${a.media_id} not found in this business`,
            type: 'value_error',
          });
        }
      });
  }
  if (issues.length) throw new AppError('validation', 'Validation error', { issues });
}

/** How long an upload no message names is kept (docs/api.md#mms-uploads). */
export const UNATTACHED_UPLOAD_TTL_MS = 24 * 3600 * 1000;
/** Uploads deleted per transaction, and transactions per run (the rest waits for the next run). */
const CLEANUP_BATCH = 1000;
const CLEANUP_MAX_BATCHES = 100;

/**
 * The worker's maintenance (server/services/maintenance.ts): deletes uploads no message has named
 * that were made more than a day before `now`, then the contents no upload refers to any more, and
 * takes their bytes off the business's count. One business at a time, each batch in a transaction
 * that holds the business's storage lock (lockStorage), so an upload of the same bytes meanwhile
 * either comes first (and its upload keeps the content) or after (and stores it anew, counted).
 */
export async function deleteUnattachedUploads(
  now = new Date(),
  tx: Tx = db,
): Promise<{ uploads: number; contents: number; bytes: number }> {
  const cutoff = new Date(now.getTime() - UNATTACHED_UPLOAD_TTL_MS);
  const total = { uploads: 0, contents: 0, bytes: 0 };
  for (let batch = 0; batch < CLEANUP_MAX_BATCHES; batch++) {
    const [next] = await tx
      .select({ businessId: mediaUploads.businessId })
      .from(mediaUploads)
      .where(and(isNull(mediaUploads.attachedAt), lt(mediaUploads.createdAt, cutoff)))
      .limit(1);
    if (!next) break;
    const { businessId } = next;
    await tx.transaction(async (tx) => {
      await lockStorage(businessId, tx);
      const gone = await tx
        .delete(mediaUploads)
        .where(
          and(
            eq(mediaUploads.businessId, businessId),
            sql`media_uploads.id in (
              select id from media_uploads
              where business_id = ${businessId} and attached_at is null and created_at < ${cutoff.toISOString()}::timestamptz
              limit ${CLEANUP_BATCH})`,
            // Re-checked on the row itself: one a message named meanwhile is kept.
            isNull(mediaUploads.attachedAt),
          ),
        )
        .returning({ sha256: mediaUploads.sha256 });
      const hashes = [...new Set(gone.map((g) => g.sha256))];
      const freed = hashes.length
        ? await tx
            .delete(mediaContents)
            .where(
              and(
                eq(mediaContents.businessId, businessId),
                equalsAny(mediaContents.sha256, hashes, 'text'),
                sql`not exists (select 1 from media_uploads u where u.business_id = media_contents.business_id and u.sha256 = media_contents.sha256)`,
              ),
            )
            .returning({ sizeBytes: mediaContents.sizeBytes })
        : [];
      const bytes = freed.reduce((sum, f) => sum + f.sizeBytes, 0);
      if (bytes) {
        await tx
          .update(mediaStorage)
          .set({ storedBytes: sql`${mediaStorage.storedBytes} - ${bytes}` })
          .where(eq(mediaStorage.businessId, businessId));
      }
      total.uploads += gone.length;
      total.contents += freed.length;
      total.bytes += bytes;
    });
  }
  return total;
}

type MmsItem = { media_urls?: string[]; media_ids?: number[] };

/**
 * Every queue item's MMS media as the message's attachments, in the order given (media_urls, then
 * media_ids), keyed by item index. Uploads are looked up in one query for the whole request: an id
 * this business does not have is a 422 at `messages[i].media_ids[j]`, and one message's uploads
 * together over MMS_MAX_BYTES a 422 at `messages[i].media_ids`.
 */
export async function mmsAttachments(
  businessId: number,
  // Any queue item (an email's, a record item's): only an SMS queue item has these fields.
  items: { item: object; index: number }[],
  issues: ValidationIssue[],
  tx: Tx,
): Promise<Map<number, StoredAttachment[]>> {
  const mms = items.map(({ item, index }) => ({ item: item as MmsItem, index }));
  const ids = [...new Set(mms.flatMap(({ item }) => item.media_ids ?? []))];
  const found = new Map<number, Pick<Row, 'id' | 'contentType' | 'sizeBytes' | 'filename'>>();
  if (ids.length) {
    const rows = await tx
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
