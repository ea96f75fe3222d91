import type { AppointmentReplyIntent } from '@/server/shared/appointment-replies';
import { eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Tx } from '@/server/db/client';
import { isoTimestamp } from '@/db/sql-json';
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

/** How a client's reply to an appointment reminder was read (docs/api.md#replies-to-reminders): its appointment and reading. */
type AppointmentReplyOut = { appointment_id: number; intent: AppointmentReplyIntent };
// Read only for an inbound text (CASE stops there): an email's metadata, with its HTML, is never detoasted.
const APPOINTMENT_REPLY_SQL = (m: { channel: SQL; direction: SQL; metadata: SQL }) => sql`case
    when ${m.channel} = 'sms' and ${m.direction} = 'inbound' and ${m.metadata} ? 'appointment_reply' then json_build_object(
      'appointment_id', (${m.metadata}->'appointment_reply'->>'appointment_id')::int,
      'intent', ${m.metadata}->'appointment_reply'->>'intent') end`;

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
  // Only the reading of a reply to an appointment reminder, not the whole (possibly 5 MB) metadata.
  appointmentReply: sql<AppointmentReplyOut | null>`${APPOINTMENT_REPLY_SQL({
    channel: sql`${messages.channel}`,
    direction: sql`${messages.direction}`,
    metadata: sql`${messages.providerMetadata}`,
  })}`.as('appointment_reply'),
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

export type MessageItemOut = z.input<typeof MessageItem>;

export function toMessageItem(row: Row): MessageItemOut {
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
    appointment_reply: row.appointmentReply,
  };
}

/** A quiet-hours window's minutes of the day as clockOf writes them ("08:00", "24:00"). */
const clockSql = (minutes: SQL) => sql`lpad((${minutes} / 60)::text, 2, '0') || ':' || lpad((${minutes} % 60)::text, 2, '0')`;

/**
 * The JSON array of MessageItems (what toMessageItem answers, key for key) of the messages a
 * subquery names, built by PostgreSQL: `page` selects `id` and `sent_at` of the messages to show
 * and may carry its own ORDER BY / LIMIT / OFFSET; they come out newest first (sent_at, then id,
 * descending). A page of 25 messages is then one text value for Node to pass on, not 25 rows of
 * 45 columns to parse, map and serialise again (bench:inbox's profile). Columns are read from the
 * table under the alias `m`; serialize.test.ts compares both forms on the same messages.
 */
export const messageItemsJson = (page: SQL) => sql`(
  select coalesce(json_agg(to_json(i) order by p.sent_at desc, p.id desc), '[]')::text
  from (${page}) p
  join messages m on m.id = p.id
  join clients cl on cl.id = m.client_id
  left join staff s on s.id = m.staff_id
  cross join lateral (select
    m.id as message_id, m.conversation_id, m.client_id, m.message_type, m.content, m.channel, m.direction,
    m.category as message_category, m.notification_type, m.sender_id, m.sender_type,
    cl.name as client_name, cl.gender as client_gender, cl.image_url as client_image_url,
    s.name as staff_name, s.gender as staff_gender, s.image_url as staff_image_url,
    m.status as message_status, ${isoTimestamp(sql`m.sent_at`)} as sent_at, ${isoTimestamp(sql`m.send_at`)} as send_at,
    m.cancel_on_reply, m.hold_reason,
    case when m.quiet_hours is not null then json_build_object(
      'time_zone', m.quiet_hours->'time_zone',
      'start', ${clockSql(sql`(m.quiet_hours->>'start')::int`)},
      'end', ${clockSql(sql`(m.quiet_hours->>'end')::int`)}) end as quiet_hours,
    m.flagged, m.is_read, m.response_id, m.receiver_id, m.receiver_type, m.subject, m.recording_url,
    m.error_code, m.error_message, m.segments, m.request_id, m.provider, m.provider_message_id,
    m.from_address, m.to_address, m.cc as cc_email, m.bcc as bcc_email,
    (select json_agg(json_build_object('filename', a->'filename', 'content_type', a->'content_type', 'url', a->'url',
                                       'size', a->'size', 'media_id', coalesce(a->'media_id', 'null')) order by n)
     from jsonb_array_elements(m.attachments) with ordinality as x(a, n)) as attachments,
    m.attempts, m.call_duration_seconds, m.call_outcome,
    ${APPOINTMENT_REPLY_SQL({ channel: sql`m.channel`, direction: sql`m.direction`, metadata: sql`m.provider_metadata` })} as appointment_reply) i)`;
