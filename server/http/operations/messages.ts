import { z } from 'zod';
import { AppError } from '@/server/errors';
import { MessageResponse } from '@/server/schemas/businesses';
import { businessPath, idParam, UpdateSuccessResponse } from '@/server/schemas/common';
import {
  CollisionResponse,
  MAX_ITEMS,
  pageQuery,
  platformRequestPath,
  ProcessMessagesRequest,
  RecordEmailRequest,
  RecordSmsRequest,
  requestPath,
  RequestMessages,
  RescheduleRequest,
  RetryRequest,
  RetryResponse,
  SendEmailRequest,
  SendSmsRequest,
  SuccessResponse,
  UpdateEmailStatusRequest,
  UpdateSmsStatusRequest,
} from '@/server/schemas/messages';
import { defineOperation } from '../operation';

/** 413 before validation: a bulk request over the item limit is refused whole. */
function assertItemLimit(raw: unknown): void {
  const items = (raw as { messages?: unknown } | null)?.messages;
  if (Array.isArray(items) && items.length > MAX_ITEMS) {
    throw new AppError('payload_too_large', `At most ${MAX_ITEMS} messages per request (got ${items.length})`);
  }
}

const creates = { idempotent: true as const, preValidate: assertItemLimit, errors: [403, 404, 409, 413] };
/** Queue operations: their 409 may be the collision guard's, which lists the new messages (docs/api.md#collision-guard). */
const queues = { ...creates, conflictResponse: CollisionResponse };

export const queueSms = defineOperation({
  operationId: 'queueSms',
  method: 'post',
  path: '/businesses/{business_id}/sms',
  tag: 'sms',
  summary: 'Queue SMS for sending and database recording',
  description:
    'Stores every message as `queued` under one request_id and enqueues it, in one transaction; returns when that commits. ' +
    'A `message_id` item re-queues that stored message when it is initiated, failed or undelivered (409 otherwise). Up to 1,000 items. ' +
    'With `send_at` the messages are stored `scheduled` and sent then (send later). ' +
    "With `last_seen_message_id`, a 409 listing `new_message_ids` when a recipient's conversation has a client message or another sender's reply newer than it (collision guard).",
  auth: 'any',
  params: businessPath,
  body: SendSmsRequest,
  response: SuccessResponse,
  ...queues,
});

/** docs/api.md#record-mode */
const RECORD_RULES =
  "Files messages another system already sent or received; nothing is ever sent from here. An item `status` says what already happened (`queued` and `sending` are not accepted); a recorded message is never claimed by a send worker. Re-queue one on purpose with `message_id` in a send request, or retry it: that is a send, with the send worker's opt-out and consent checks.";

export const recordSms = defineOperation({
  operationId: 'recordSms',
  method: 'post',
  path: '/businesses/{business_id}/sms/record',
  tag: 'sms',
  summary: 'Record SMS message in database without sending',
  description: RECORD_RULES,
  auth: 'any',
  params: businessPath,
  body: RecordSmsRequest,
  response: SuccessResponse,
  ...creates,
});

/** The rules of the status endpoints (docs/api.md#record-mode, #monotonic-updates). */
const STATUS_UPDATE_RULES =
  'Statuses only move forward: an update that does not rank higher is accepted and ignored (`updated: 0`). ' +
  '`queued` and `sending` are not accepted (422): a status reported here never sends a message. 409 for a `scheduled` message: cancel, reschedule or send it now instead.';

export const updateSmsStatus = defineOperation({
  operationId: 'updateSmsStatus',
  method: 'post',
  path: '/businesses/{business_id}/sms/status',
  tag: 'sms',
  summary: 'Update SMS delivery status',
  description: STATUS_UPDATE_RULES,
  auth: 'any',
  params: businessPath,
  body: UpdateSmsStatusRequest,
  response: UpdateSuccessResponse,
  errors: [403, 404, 409],
});

export const queueEmail = defineOperation({
  operationId: 'queueEmail',
  method: 'post',
  path: '/businesses/{business_id}/email',
  tag: 'email',
  summary: 'Queue email for sending and database recording',
  description:
    'As the SMS queue: stored as `queued` at once (`scheduled` with `send_at`), `sent` when the provider accepts it. Attachments up to 5 MiB each.',
  auth: 'any',
  params: businessPath,
  body: SendEmailRequest,
  response: SuccessResponse,
  ...queues,
});

export const recordEmail = defineOperation({
  operationId: 'recordEmail',
  method: 'post',
  path: '/businesses/{business_id}/email/record',
  tag: 'email',
  summary: 'Record email without sending',
  description: RECORD_RULES,
  auth: 'any',
  params: businessPath,
  body: RecordEmailRequest,
  response: SuccessResponse,
  ...creates,
});

export const updateEmailStatus = defineOperation({
  operationId: 'updateEmailStatus',
  method: 'post',
  path: '/businesses/{business_id}/email/status',
  tag: 'email',
  summary: 'Update email delivery status',
  description: STATUS_UPDATE_RULES,
  auth: 'any',
  params: businessPath,
  body: UpdateEmailStatusRequest,
  response: UpdateSuccessResponse,
  errors: [403, 404, 409],
});

export const processMessages = defineOperation({
  operationId: 'processMessages',
  method: 'post',
  path: '/messages/{business_id}',
  tag: 'messages',
  summary: 'Process and record messages from any supported channel',
  description:
    "`channel` (sms or email) and `mode` (send or record) choose the SMS or email queue or record operation; the rest of the body is that operation's.",
  auth: 'any',
  params: businessPath,
  docBody: z.union([
    ProcessMessagesRequest,
    SendSmsRequest.extend({ channel: z.literal('sms'), mode: z.literal('send') }),
    RecordSmsRequest.extend({ channel: z.literal('sms'), mode: z.literal('record') }),
    SendEmailRequest.extend({ channel: z.literal('email'), mode: z.literal('send') }),
    RecordEmailRequest.extend({ channel: z.literal('email'), mode: z.literal('record') }),
  ]),
  response: SuccessResponse,
  ...queues,
});

export const getRequestMessages = defineOperation({
  operationId: 'getRequestMessages',
  method: 'get',
  path: '/messages/{business_id}/requests/{request_id}',
  tag: 'messages',
  summary: 'Get messages by request ID',
  auth: 'any',
  params: requestPath,
  query: pageQuery,
  response: RequestMessages,
  errors: [403, 404],
});

export const getPlatformRequestMessages = defineOperation({
  operationId: 'getPlatformRequestMessages',
  method: 'get',
  path: '/messages/requests/{request_id}',
  tag: 'messages',
  summary: 'Get messages by request ID (platform key, any business)',
  auth: 'platform',
  params: platformRequestPath,
  query: pageQuery,
  response: RequestMessages,
  errors: [403, 404],
});

export const retryMessages = defineOperation({
  operationId: 'retryMessages',
  method: 'post',
  path: '/messages/{business_id}/retry',
  tag: 'messages',
  summary: 'Retry failed messages',
  description:
    'Re-queues outbound failed and undelivered messages (attempts + 1); every other message is listed in `skipped` with the reason.',
  auth: 'any',
  params: businessPath,
  body: RetryRequest,
  response: RetryResponse,
  idempotent: true,
  errors: [403, 404],
});

export const retryRequest = defineOperation({
  operationId: 'retryRequestMessages',
  method: 'post',
  path: '/messages/{business_id}/requests/{request_id}/retry',
  tag: 'messages',
  summary: 'Retry failed messages of a request',
  auth: 'any',
  params: requestPath,
  response: RetryResponse,
  idempotent: true,
  errors: [403, 404],
});

const messagePath = z.object({ business_id: idParam, message_id: idParam });

export const cancelScheduledMessage = defineOperation({
  operationId: 'cancelScheduledMessage',
  method: 'post',
  path: '/businesses/{business_id}/messages/{message_id}/cancel',
  tag: 'messages',
  summary: 'Cancel a scheduled message',
  description:
    'A `scheduled` message (send later) becomes `canceled` and is never sent. 409 once it is no longer scheduled (it went, or was canceled).',
  auth: 'any',
  params: messagePath,
  response: MessageResponse,
  errors: [403, 404, 409],
});

export const rescheduleMessage = defineOperation({
  operationId: 'rescheduleMessage',
  method: 'post',
  path: '/businesses/{business_id}/messages/{message_id}/reschedule',
  tag: 'messages',
  summary: 'Move a scheduled message to another time',
  description:
    "Sets a `scheduled` message's `send_at`; it goes then, once. A text that keeps to quiet hours (`quiet_hours` set) moved outside its recipient's window goes at the next opening instead (`hold_reason` quiet_hours). 409 once it is no longer scheduled.",
  auth: 'any',
  params: messagePath,
  body: RescheduleRequest,
  response: MessageResponse,
  errors: [403, 404, 409],
});

export const sendScheduledMessageNow = defineOperation({
  operationId: 'sendScheduledMessageNow',
  method: 'post',
  path: '/businesses/{business_id}/messages/{message_id}/send-now',
  tag: 'messages',
  summary: 'Send a scheduled message now',
  description:
    'A `scheduled` message goes now, once, also one held by quiet hours (the override: it no longer keeps to the window). 409 once it is no longer scheduled.',
  auth: 'any',
  params: messagePath,
  response: MessageResponse,
  errors: [403, 404, 409],
});
