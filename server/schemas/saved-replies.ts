import { z } from 'zod';
import {
  MAX_SAVED_REPLY_EMAIL_BODY,
  MAX_SAVED_REPLY_SMS_BODY,
  MAX_SAVED_REPLY_SUBJECT,
  MAX_SAVED_REPLY_TITLE,
  SAVED_REPLY_CHANNELS,
  TEMPLATE_VARIABLES,
} from '@/server/shared/templates';
import { idParam, paginationQuery, timestampOut } from './common';

/** docs/api.md#saved-replies. Rules that depend on the stored row (a PATCH) are checked by the service. */

const SavedReplyChannel = z
  .enum(SAVED_REPLY_CHANNELS)
  .nullable()
  .meta({ id: 'SavedReplyChannel', description: '`sms`, `email`, or null for any channel' });

const title = z.string().trim().min(1, 'must not be empty').max(MAX_SAVED_REPLY_TITLE);
const body = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_SAVED_REPLY_EMAIL_BODY)
  .meta({
    description:
      `The text, with {{variables}} (${TEMPLATE_VARIABLES.join(', ')}). ` +
      `At most ${MAX_SAVED_REPLY_SMS_BODY} characters unless the channel is email (${MAX_SAVED_REPLY_EMAIL_BODY.toLocaleString('en-US')}).`,
  });
const subject = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_SAVED_REPLY_SUBJECT)
  .nullable()
  .meta({ description: 'Email-only replies: the subject, with {{variables}}' });

export const SavedReplyPath = z.object({ business_id: idParam, saved_reply_id: idParam });

export const CreateSavedReplyRequest = z
  .object({ title, body, channel: SavedReplyChannel.default(null), subject: subject.optional() })
  .meta({ id: 'CreateSavedReplyRequest' });

export const UpdateSavedReplyRequest = z
  .object({ title: title.optional(), body: body.optional(), channel: SavedReplyChannel.optional(), subject: subject.optional() })
  .meta({
    id: 'UpdateSavedReplyRequest',
    description: 'Only the fields given change. Changing the channel away from email drops the subject.',
  });

export const SavedReplyListQuery = z.object({
  search: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: 'Case-insensitive substring of the title or the body; 1–100 characters once trimmed' }),
  channel: z
    .enum(SAVED_REPLY_CHANNELS)
    .optional()
    .meta({ description: 'Replies usable on this channel: those limited to it and those for any channel' }),
  ...paginationQuery,
});

export const SavedReply = z
  .object({
    saved_reply_id: z.number().int(),
    business_id: z.number().int(),
    title: z.string(),
    body: z.string(),
    channel: SavedReplyChannel,
    subject: z.string().nullable(),
    variables: z.array(z.string()).meta({ description: 'The variables the body and subject use, in order of appearance' }),
    created_at: timestampOut,
    updated_at: timestampOut,
  })
  .meta({ id: 'SavedReply' });

export const PaginatedSavedReplies = z
  .object({
    saved_replies: z.array(SavedReply),
    total_saved_replies: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedSavedReplies' });

export const SavedReplyDeleted = z
  .object({ success: z.boolean(), saved_reply_id: z.number().int() })
  .meta({ id: 'SavedReplyDeleted' });
