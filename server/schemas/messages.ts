import { z } from 'zod';
import { REPORTABLE_STATUSES } from '@/server/shared/message-statuses';
import { isBase64 } from '@/server/lib/text';
import { MAX_SMS_LENGTH, MMS_MAX_BYTES, MMS_MAX_MEDIA, MMS_UPLOAD_TYPES } from '@/server/shared/limits';
import {
  CHANNELS,
  DIRECTIONS,
  MESSAGE_CATEGORIES,
  MESSAGE_STATUSES,
  NOTIFICATION_TYPES,
  PROVIDERS,
  USER_TYPES,
} from '@/db/schema/enums';
import { actingStaffId } from './acting-staff';
import {
  email,
  id,
  idParam,
  int32,
  isoTimestamp,
  MAX_PAGE,
  paginationQuery,
  ErrorResponse,
  timestampOut,
  UpdateSuccessResponse,
} from './common';

export const MAX_ITEMS = 1000;
/** An email's text body, in characters. */
export const MAX_EMAIL_TEXT_LENGTH = 1_000_000;
/** The REST body limit (server/http/route.ts), as a bound on any one string in it. */
const MAX_BODY_CHARS = 10 * 1024 * 1024;

/** EmailContent (docs/api.md#schemas): what an email says, apart from its envelope (registered by name in server/http/openapi.ts). */
export const EmailContent = z.object({
  subject: z.string().max(998),
  text: z.string().max(MAX_EMAIL_TEXT_LENGTH),
  html: z.string().max(5_000_000).optional(),
});

const Channel = z.enum(CHANNELS).meta({ id: 'Channel' });
const MessageCategory = z.enum(MESSAGE_CATEGORIES).meta({ id: 'MessageCategory' });
const NotificationType = z.enum(NOTIFICATION_TYPES).meta({ id: 'NotificationType' });
const Provider = z.enum(PROVIDERS).meta({ id: 'Provider' });
const UserType = z.enum(USER_TYPES).meta({ id: 'UserType' });
const MessageStatus = z.enum(MESSAGE_STATUSES).meta({ id: 'MessageStatus' });
const Direction = z.enum(DIRECTIONS);

/** A status a caller may record or report for a text or email (server/shared/message-statuses.ts). */
const ReportableStatus = z.enum(REPORTABLE_STATUSES).meta({
  id: 'ReportableStatus',
  description:
    'What already happened to the message elsewhere. `queued` and `sending` are not accepted: a recorded message is never sent (docs: Record mode).',
});

/** Caller-defined JSON kept with a message: at most 50 keys and 16 KiB once serialised. */
const METADATA_LIMITS = { keys: 50, bytes: 16 * 1024 } as const;
const metadata = z
  .record(z.string().max(100), z.unknown())
  .refine((v) => Object.keys(v).length <= METADATA_LIMITS.keys, `must have at most ${METADATA_LIMITS.keys} keys`)
  .refine(
    (v) => Buffer.byteLength(JSON.stringify(v)) <= METADATA_LIMITS.bytes,
    `must be at most ${METADATA_LIMITS.bytes} bytes as JSON`,
  )
  .meta({
    maxProperties: METADATA_LIMITS.keys,
    description: `Free-form JSON object: at most ${METADATA_LIMITS.keys} keys and ${METADATA_LIMITS.bytes / 1024} KiB serialised`,
  });

/** E.164 or anything a person types (normalised with the business's country). */
const phone = z.string().trim().min(1).max(40);

/** docs/api.md#sending-messages (the envelope): fields shared by SMS and email requests. */
const envelope = {
  category: MessageCategory.default('conversational'),
  notification_type: NotificationType.optional(),
  staff_id: actingStaffId,
  provider: Provider.optional(),
  sent_by: int32.optional(),
  sender_type: UserType,
  sent_at: isoTimestamp.optional(),
};

/** How far ahead a message can be scheduled (docs/api.md#send-later). */
export const MAX_SCHEDULE_DAYS = 365;

/** A send_at: a calendar-checked timestamp in the future, at most MAX_SCHEDULE_DAYS ahead. */
export const sendAt = isoTimestamp
  .refine((d) => d.getTime() > Date.now(), 'must be in the future')
  .refine((d) => d.getTime() <= Date.now() + MAX_SCHEDULE_DAYS * 86_400_000, `must be at most ${MAX_SCHEDULE_DAYS} days ahead`)
  .meta({
    type: 'string',
    format: 'date-time',
    maxLength: 40,
    description: `Send later: when to send, in the future and at most ${MAX_SCHEDULE_DAYS} days ahead. The messages are stored \`scheduled\` and go out then.`,
  });

/** Queue requests only (docs/api.md#send-later). */
const sendLater = {
  send_at: sendAt.optional(),
  cancel_on_reply: z.boolean().optional().meta({
    description:
      'With send_at: cancel the scheduled message when the client writes in before it goes (default true). Ignored without send_at.',
  }),
};

/**
 * The collision guard (docs/api.md#collision-guard): the newest message the sender had seen. A
 * message id (a PostgreSQL bigint), so bounded by what a JSON number holds exactly rather than by
 * the int32 of other ids; 0 says the sender saw none. Queue requests only.
 */
const LAST_SEEN_MESSAGE = `must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`;
export const lastSeenMessageId = z
  .number({ error: LAST_SEEN_MESSAGE })
  .int(LAST_SEEN_MESSAGE)
  .min(0, LAST_SEEN_MESSAGE)
  .max(Number.MAX_SAFE_INTEGER, LAST_SEEN_MESSAGE)
  .meta({
    description:
      "Collision guard: the newest message id the sender had seen (0: none). When a client message or another sender's reply reached a recipient's conversation after it, nothing is queued: 409 with `new_message_ids`. Omitted: no check.",
  });
const collisionGuard = { last_seen_message_id: lastSeenMessageId.optional() };

function requireFields(
  item: Record<string, unknown>,
  ctx: z.RefinementCtx,
  required: string[],
  oneOf: [string, string],
  mode: 'send' | 'record' = 'send',
) {
  // Queueing a stored message_id re-queues it, and the rest is ignored; recording ignores message_id.
  if (mode === 'send' && item.message_id !== undefined) return;
  // A queue item takes its text from a saved reply instead (docs/api.md#saved-replies): exactly one of the two.
  if (item.saved_reply_id !== undefined) {
    for (const field of ['message', 'html']) {
      if (item[field] !== undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: 'Give message or saved_reply_id, not both' });
    }
    required = required.filter((field) => field !== 'message' && field !== 'subject');
  }
  for (const field of required) {
    if (item[field] === undefined)
      ctx.addIssue({ code: 'custom', path: [field], message: 'Field required', params: { type: 'missing' } });
  }
  if (item[oneOf[0]] === undefined && item[oneOf[1]] === undefined) {
    ctx.addIssue({ code: 'custom', path: [oneOf[0]], message: `One of ${oneOf[0]} or ${oneOf[1]} is required` });
  }
}

const smsItemFields = {
  message_id: id.optional(),
  message: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_SMS_LENGTH, `must be at most ${MAX_SMS_LENGTH} characters`)
    .optional(),
  client_id: id.optional(),
  wl_user_id: int32.optional(),
  to_number: phone.optional(),
  status: MessageStatus.optional(),
  provider_metadata: metadata.optional(),
};

/** Queue items only: the saved reply whose text, resolved for this recipient, is sent instead of `message`. */
const savedReplyId = id.optional().meta({
  description:
    'Instead of `message` (and, for email, optionally `subject`): a saved reply of this business, its variables resolved for this recipient. A value missing for the recipient is a 422.',
});

/** Queue items only: pictures or files sent with the text as one MMS (docs/api.md#mms). */
const mediaUrls = z
  .array(
    z
      .string()
      .max(2048)
      .pipe(z.url({ protocol: /^https$/, error: 'must be an https URL' })),
  )
  .min(1)
  .max(10)
  .optional()
  .meta({
    description:
      'Up to 10 public https URLs of pictures or files, sent with the text as one MMS (Twilio fetches them when sending; US and Canadian numbers).',
  });

/** Queue items only: pictures uploaded with POST /businesses/{business_id}/media, sent with the text (docs/api.md#mms-uploads). */
const mediaIds = z
  .array(id)
  .min(1)
  .max(MMS_MAX_MEDIA)
  .optional()
  .meta({
    description: `Up to ${MMS_MAX_MEDIA} pictures uploaded to this business (\`media_id\` of POST /businesses/{business_id}/media), sent with the text as one MMS; at most ${MMS_MAX_BYTES.toLocaleString('en-US')} bytes together. Twilio fetches them from a signed URL of ours.`,
  });

const SmsMessageItem = z
  .object({ ...smsItemFields, saved_reply_id: savedReplyId, media_urls: mediaUrls, media_ids: mediaIds })
  .superRefine((item, ctx) => {
    requireFields(item, ctx, ['message'], ['to_number', 'client_id']);
    const media = (item.media_urls?.length ?? 0) + (item.media_ids?.length ?? 0);
    if (media > MMS_MAX_MEDIA) {
      ctx.addIssue({
        code: 'custom',
        path: ['media_ids'],
        message: `media_urls and media_ids together: at most ${MMS_MAX_MEDIA} (got ${media})`,
      });
    }
  })
  .meta({ id: 'SmsMessageItem' });

/** The answer to an upload (docs/api.md#mms-uploads). */
export const MediaUpload = z
  .object({
    media_id: z.number().int(),
    content_type: z.enum(MMS_UPLOAD_TYPES),
    size: z.number().int().meta({ description: 'Bytes stored' }),
    sha256: z.string().meta({ description: 'Hex SHA-256 of the bytes stored' }),
    filename: z.string().nullable().meta({ description: "The multipart part's file name, if it had one" }),
    created_at: timestampOut,
  })
  .meta({ id: 'MediaUpload' });

export const EmailAttachment = z
  .object({
    // The decoded size is checked against MAX_ATTACHMENT_BYTES by the service (413); this bound
    // is the body limit, so it documents a maximum without pre-empting that 413.
    content: z.string().max(MAX_BODY_CHARS).optional().meta({ description: 'base64 (whitespace allowed)' }),
    content_type: z
      .string()
      .max(255)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type like application/pdf')
      .optional(),
    filename: z.string().trim().min(1).max(255),
    url: z
      .string()
      .max(2048)
      .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }))
      .optional(),
  })
  .superRefine((a, ctx) => {
    if (!a.content && !a.url) ctx.addIssue({ code: 'custom', path: ['content'], message: 'One of content or url is required' });
    if (a.content && !isBase64(a.content)) ctx.addIssue({ code: 'custom', path: ['content'], message: 'must be base64' });
  })
  .meta({ id: 'EmailAttachment' });

const emailItemFields = {
  message_id: id.optional(),
  client_id: id.optional(),
  wl_user_id: int32.optional(),
  to_email: email.optional(),
  subject: z.string().trim().min(1).max(998).optional(),
  message: z.string().min(1, 'must not be empty').max(MAX_EMAIL_TEXT_LENGTH).optional(),
  html: z.string().max(5_000_000).optional(),
  cc_email: z.array(email).max(50).optional(),
  bcc_email: z.array(email).max(50).optional(),
  attachments: z.array(EmailAttachment).max(20).optional(),
  status: MessageStatus.optional(),
  provider_metadata: metadata.optional(),
};

const EmailMessageItem = z
  .object({ ...emailItemFields, saved_reply_id: savedReplyId })
  .superRefine((item, ctx) => requireFields(item, ctx, ['message', 'subject'], ['to_email', 'client_id']))
  .meta({ id: 'EmailMessageItem' });

const recordFields = {
  status: ReportableStatus.optional(),
  direction: Direction.default('outbound'),
  provider_message_id: z.string().trim().min(1).max(200).optional(),
};

const RecordMessageItem = z
  .object({ ...smsItemFields, ...recordFields })
  .superRefine((item, ctx) => requireFields(item, ctx, ['message'], ['to_number', 'client_id'], 'record'))
  .meta({ id: 'RecordMessageItem' });

const RecordEmailItem = z
  .object({ ...emailItemFields, ...recordFields })
  .superRefine((item, ctx) => requireFields(item, ctx, ['message', 'subject'], ['to_email', 'client_id'], 'record'))
  .meta({ id: 'RecordEmailItem' });

// Over MAX_ITEMS is a 413 (docs/api.md#bulk-requests), raised by the operation's preValidate before zod runs;
// the max here documents the bound.
const items = <T extends z.ZodType>(item: T) => z.array(item).min(1, 'must contain at least one message').max(MAX_ITEMS);

export const SendSmsRequest = z
  .object({
    ...envelope,
    ...sendLater,
    ...collisionGuard,
    override_quiet_hours: z.boolean().optional().meta({
      description:
        "true: send now even where it is outside the recipient's sending window (docs: Quiet hours). Default false: a campaign, reminder, transactional, marketing or review-request text queued then is scheduled for the window's next opening.",
    }),
    from_number: phone.optional(),
    messages: items(SmsMessageItem),
  })
  .meta({ id: 'SendSmsRequest' });
export const RecordSmsRequest = z
  .object({ ...envelope, from_number: phone.optional(), messages: items(RecordMessageItem) })
  .meta({ id: 'RecordSmsRequest' });
export const SendEmailRequest = z
  .object({ ...envelope, ...sendLater, ...collisionGuard, from_email: email.optional(), messages: items(EmailMessageItem) })
  .meta({ id: 'SendEmailRequest' });
export const RecordEmailRequest = z
  .object({ ...envelope, from_email: email.optional(), messages: items(RecordEmailItem) })
  .meta({ id: 'RecordEmailRequest' });

/** `POST /messages/{business_id}`: any channel, send or record (docs/api.md#sending-messages). */
export const ProcessMessagesRequest = z
  .object({ channel: z.enum(['sms', 'email']), mode: z.enum(['send', 'record']) })
  .loose()
  .meta({
    id: 'ProcessMessagesRequest',
    description:
      'The envelope of SendSmsRequest / RecordSmsRequest / SendEmailRequest / RecordEmailRequest, chosen by `channel` and `mode`.',
  });

/**
 * `POST /messages/{business_id}` documents the fields of both modes in one body (docBody of
 * processMessages). A field only the other mode of the channel reads (`send_at` or `media_ids` in
 * record mode, `direction` in send mode) is ignored by the mode chosen, yet still a documented
 * field: its type is checked all the same, so `send_at: true` or `media_ids: [true]` is a 422 in
 * either mode (docs/api.md#sending-messages). Checked beside the chosen schema, never instead of it.
 */
const otherModeCheck = (envelope: z.ZodRawShape, item: z.ZodRawShape) =>
  z.object({
    ...envelope,
    // The chosen schema reports a `messages` that is no array, or an item that is no object.
    messages: z.preprocess(
      (v) => (Array.isArray(v) ? v.map((i: unknown) => (i && typeof i === 'object' && !Array.isArray(i) ? i : {})) : []),
      z.array(z.object(item)),
    ),
  });
const queueOnlyEnvelope = {
  // Its format, not the "in the future" rule: nothing is scheduled in record mode.
  send_at: isoTimestamp.optional(),
  cancel_on_reply: z.boolean().optional(),
  ...collisionGuard,
};
export const OTHER_MODE_FIELDS = {
  sms: {
    send: otherModeCheck({}, recordFields),
    record: otherModeCheck(
      { ...queueOnlyEnvelope, override_quiet_hours: z.boolean().optional() },
      { saved_reply_id: savedReplyId, media_urls: mediaUrls, media_ids: mediaIds },
    ),
  },
  email: {
    send: otherModeCheck({}, recordFields),
    record: otherModeCheck(queueOnlyEnvelope, { saved_reply_id: savedReplyId }),
  },
} as const;

const statusUpdate = (name: string) =>
  z
    .object({
      message_id: id.optional(),
      provider_message_id: z.string().trim().min(1).max(200).optional(),
      status: ReportableStatus,
      error_code: z.string().trim().max(100).optional(),
      error_message: z.string().trim().max(2000).optional(),
      provider_metadata: metadata.optional(),
    })
    .superRefine((v, ctx) => {
      if (v.message_id === undefined && v.provider_message_id === undefined) {
        ctx.addIssue({ code: 'custom', path: ['message_id'], message: 'One of message_id or provider_message_id is required' });
      }
    })
    .meta({ id: name });

export const UpdateSmsStatusRequest = statusUpdate('UpdateSmsStatusRequest');
export const UpdateEmailStatusRequest = statusUpdate('UpdateEmailStatusRequest');

export const SuccessResponse = z
  .object({ success: z.boolean(), message: z.string(), request_id: z.uuid(), message_ids: z.array(z.number().int()) })
  .meta({ id: 'SuccessResponse' });

/** The 409 of a send the collision guard held (docs/api.md#collision-guard). */
export const CollisionResponse = ErrorResponse.extend({
  new_message_ids: z
    .array(z.number().int())
    .optional()
    .meta({ description: 'Collision guard only: the messages that arrived after `last_seen_message_id`, oldest first.' }),
}).meta({ id: 'CollisionResponse' });

/** A sending window as the API shows it: the recipient's clock and the window's local times. */
export const QuietHoursOut = z
  .object({
    time_zone: z.string().meta({ description: 'IANA time zone of the recipient (client, number range, location or business)' }),
    start: z.string().meta({ example: '08:00' }),
    end: z.string().meta({ example: '21:00' }),
  })
  .meta({ id: 'QuietHours' });

export const MessageItem = z
  .object({
    message_id: z.number().int(),
    conversation_id: z.number().int(),
    client_id: z.number().int(),
    message_type: z.enum(['TEXT', 'EMAIL', 'CALL', 'NOTE']),
    content: z.string().nullable(),
    channel: Channel.nullable(),
    direction: Direction,
    message_category: MessageCategory,
    notification_type: NotificationType.nullable(),
    sender_id: z.number().int().nullable(),
    sender_type: UserType,
    client_name: z.string().nullable(),
    client_gender: z.string().nullable(),
    client_image_url: z.string().nullable(),
    staff_name: z.string().nullable(),
    staff_gender: z.string().nullable(),
    staff_image_url: z.string().nullable(),
    message_status: MessageStatus,
    sent_at: timestampOut,
    send_at: timestampOut.nullable().meta({
      description:
        'Send later: when a scheduled message is due. Kept once it goes: `sent_at` is then when it went, so the difference is any delay.',
    }),
    cancel_on_reply: z.boolean().meta({ description: 'A scheduled message is canceled if the client writes in before it goes.' }),
    hold_reason: z.enum(['quiet_hours']).nullable().meta({
      description:
        "Why a `scheduled` text waits other than by choice: `quiet_hours`, it was queued outside its recipient's sending window and goes at `send_at`, the next opening (docs: Quiet hours).",
    }),
    quiet_hours: QuietHoursOut.nullable().meta({
      description: "The recipient's sending window this text keeps to; null when quiet hours do not apply to it.",
    }),
    flagged: z.boolean(),
    is_read: z.boolean(),
    response_id: z.number().int().nullable(),
    receiver_id: z.number().int().nullable(),
    receiver_type: UserType.nullable(),
    subject: z.string().nullable(),
    recording_url: z.string().nullable(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    segments: z.number().int().nullable(),
    request_id: z.string().nullable(),
    provider: Provider.nullable(),
    provider_message_id: z.string().nullable(),
    from_address: z.string().nullable(),
    to_address: z.string().nullable(),
    cc_email: z.array(z.string()).nullable(),
    bcc_email: z.array(z.string()).nullable(),
    attachments: z
      .array(
        z.object({
          filename: z.string(),
          content_type: z.string().nullable(),
          url: z.string().nullable(),
          size: z.number().nullable(),
          media_id: z.number().int().nullable().meta({
            description:
              'An uploaded picture of this business (docs/api.md#mms-uploads); its bytes are served by getMessageMedia.',
          }),
        }),
      )
      .nullable(),
    attempts: z.number().int(),
    call_duration_seconds: z.number().int().nullable(),
    call_outcome: z
      .enum(['missed', 'voicemail'])
      .nullable()
      .meta({ description: 'For an inbound call nobody answered: `missed`, or `voicemail` when the caller left one' }),
    appointment_reply: z
      .object({
        appointment_id: z.number().int(),
        intent: z.enum(['confirm', 'reschedule', 'cancel', 'unclear', 'opt_out']),
      })
      .nullable()
      .meta({
        description:
          "A client's text read as a reply to an appointment reminder (docs: Replies to reminders): its appointment and how it was read; null otherwise",
      }),
  })
  .meta({ id: 'MessageItem' });

/**
 * Search totals are counted up to this many matches (server/services/search.ts): past it
 * `total_messages` is this number and `total_capped` is true.
 */
export const SEARCH_TOTAL_CAP = 1000;
/** Search pages reach this many matches (page × page_size); deeper pages are a 422. */
export const SEARCH_RESULT_WINDOW = 10_000;

/**
 * The 422 of a search page past SEARCH_RESULT_WINDOW, on `page` (REST and tRPC alike): a deep page
 * of a common term would read every match before it. A page over MAX_PAGE already has its own issue.
 */
export function refuseBeyondSearchWindow(page: number, pageSize: number, ctx: z.RefinementCtx) {
  if (page <= MAX_PAGE && page * pageSize > SEARCH_RESULT_WINDOW) {
    ctx.addIssue({
      code: 'custom',
      path: ['page'],
      message: `search results are paged through the first ${SEARCH_RESULT_WINDOW.toLocaleString('en-US')} matches: page × page size must be at most ${SEARCH_RESULT_WINDOW}`,
    });
  }
}
const CAP = SEARCH_TOTAL_CAP.toLocaleString('en-US');
export const PaginatedMessages = z
  .object({
    messages: z.array(MessageItem),
    total_messages: z
      .number()
      .int()
      .meta({
        description: `Messages matching the request. Search results count up to ${CAP}: with \`total_capped\` true there are more, and this is ${CAP}.`,
      }),
    total_capped: z
      .boolean()
      .optional()
      .meta({
        description: `Search results only: true when more than ${CAP} messages match, so \`total_messages\` is a lower bound (${CAP}). \`next_page\` stays exact.`,
      }),
    next_page: z.boolean(),
    page: z.number().int(),
    page_size: z.number().int(),
  })
  .meta({ id: 'PaginatedMessages' });

export const RequestMessages = PaginatedMessages.extend({
  request_id: z.uuid(),
  summary: z.record(z.string(), z.number().int()),
}).meta({ id: 'RequestMessages' });

export const RescheduleRequest = z.object({ send_at: sendAt }).meta({ id: 'RescheduleRequest' });

export const RetryRequest = z.object({ message_ids: z.array(id).min(1).max(MAX_ITEMS) }).meta({ id: 'RetryRequest' });

export const RetryResponse = UpdateSuccessResponse.extend({
  message_ids: z.array(z.number().int()),
  skipped: z.array(z.object({ message_id: z.number().int(), reason: z.string() })),
}).meta({ id: 'RetryResponse' });

const requestId = z.uuid('must be a UUID').meta({ maxLength: 36 });
export const requestPath = z.object({ business_id: idParam, request_id: requestId });
export const platformRequestPath = z.object({ request_id: requestId });
export const pageQuery = z.object(paginationQuery);
