import { eq, getTableColumns, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { Tx } from '@/db/client';
import { clients, messages, staff, type StoredAttachment } from '@/db/schema';
import type { MessageItem } from '@/server/schemas/messages';
import { clockOf } from '@/server/shared/quiet-hours';

/**
 * A message's attachments as a list shows them: names, types, URLs and sizes, never the bytes
 * (base64 `content`, up to 5 MiB each), which stay in the database for the worker.
 */
export const attachmentsWithoutBytes = sql<
  StoredAttachment[] | null
>`(select jsonb_agg(a - 'content') from jsonb_array_elements(${messages.attachments}) a)`.as('attachments');

// provider_metadata holds an email's HTML (up to 5 MB): read only by the one-message email view.
const { providerMetadata: _html, attachments: _bytes, ...listedColumns } = getTableColumns(messages);

/**
 * The columns a MessageItem needs: the message (without its heavy parts, so a page of 100 large
 * emails reads kilobytes, not a gigabyte), its client and its staff author.
 */
export const messageItemColumns = {
  ...listedColumns,
  attachments: attachmentsWithoutBytes,
  clientName: clients.name,
  clientGender: clients.gender,
  clientImageUrl: clients.imageUrl,
  staffName: staff.name,
  staffGender: staff.gender,
  staffImageUrl: staff.imageUrl,
};

/** SELECT … FROM messages with the joins a MessageItem needs; callers add WHERE/ORDER/LIMIT. */
export function selectMessageItems(tx: Tx) {
  return tx
    .select(messageItemColumns)
    .from(messages)
    .innerJoin(clients, eq(clients.id, messages.clientId))
    .leftJoin(staff, eq(staff.id, messages.staffId));
}

type Row = Awaited<ReturnType<ReturnType<typeof selectMessageItems>['execute']>>[number];

export function toMessageItem(row: Row): z.input<typeof MessageItem> {
  return {
    message_id: row.id,
    conversation_id: row.conversationId,
    client_id: row.clientId,
    message_type: row.messageType,
    content: row.content,
    channel: row.channel,
    direction: row.direction,
    message_category: row.category,
    notification_type: row.notificationType,
    sender_id: row.senderId,
    sender_type: row.senderType,
    client_name: row.clientName,
    client_gender: row.clientGender,
    client_image_url: row.clientImageUrl,
    staff_name: row.staffName,
    staff_gender: row.staffGender,
    staff_image_url: row.staffImageUrl,
    message_status: row.status,
    sent_at: row.sentAt.toISOString(),
    send_at: row.sendAt?.toISOString() ?? null,
    cancel_on_reply: row.cancelOnReply,
    hold_reason: row.holdReason,
    quiet_hours: row.quietHours
      ? { time_zone: row.quietHours.time_zone, start: clockOf(row.quietHours.start), end: clockOf(row.quietHours.end) }
      : null,
    flagged: row.flagged,
    is_read: row.isRead,
    response_id: row.responseId,
    receiver_id: row.receiverId,
    receiver_type: row.receiverType,
    subject: row.subject,
    recording_url: row.recordingUrl,
    error_code: row.errorCode,
    error_message: row.errorMessage,
    segments: row.segments,
    request_id: row.requestId,
    provider: row.provider,
    provider_message_id: row.providerMessageId,
    from_address: row.fromAddress,
    to_address: row.toAddress,
    cc_email: row.cc,
    bcc_email: row.bcc,
    // Attachment bytes stay in the database; the item lists what was attached.
    attachments:
      row.attachments?.map(({ filename, content_type, url, size, media_id }) => ({
        filename,
        content_type,
        url,
        size,
        media_id: media_id ?? null,
      })) ?? null,
    attempts: row.attempts,
    call_duration_seconds: row.callDurationSeconds,
    call_outcome: row.callOutcome as 'missed' | 'voicemail' | null,
  };
}
