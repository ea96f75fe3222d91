import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { messages, type MessageStatus } from '@/db/schema';
import { AppError } from '@/server/errors';
import { applyStatusUpdate } from './lifecycle';

/**
 * REST `POST /businesses/{id}/sms/status` and `/email/status`: by our id or the provider's. The
 * status is one of REPORTABLE_STATUSES (the schema), so this never hands a message to a send
 * worker (docs/api.md#record-mode).
 */
export async function updateStatusFromApi(
  businessId: number,
  channel: 'sms' | 'email',
  body: {
    message_id?: number;
    provider_message_id?: string;
    status: MessageStatus;
    error_code?: string;
    error_message?: string;
    provider_metadata?: Record<string, unknown>;
  },
  tx: Tx = db,
) {
  const field = body.message_id !== undefined ? 'message_id' : 'provider_message_id';
  const [found] = await tx
    .select({ id: messages.id, status: messages.status })
    .from(messages)
    .where(
      body.message_id !== undefined
        ? and(eq(messages.businessId, businessId), eq(messages.id, body.message_id), eq(messages.channel, channel))
        : and(
            eq(messages.businessId, businessId),
            eq(messages.providerMessageId, body.provider_message_id!),
            eq(messages.channel, channel),
          ),
    )
    .limit(1);
  if (!found) {
    throw AppError.invalid(['body', field], `${channel === 'sms' ? 'SMS' : 'Email'} message not found in this business`);
  }
  // docs/api.md#send-later: a scheduled message is moved by cancel, reschedule and send-now only. A
  // status reported for it would skip their checks (a `sent` one could never be canceled). Nothing
  // moves a message back to `scheduled`, so the check cannot go stale before the update.
  if (found.status === 'scheduled') {
    throw new AppError(
      'conflict',
      'The message is scheduled: cancel, reschedule or send it now instead (its status is not reported)',
    );
  }
  const result = await tx.transaction((tx) =>
    applyStatusUpdate(
      { businessId, messageId: found.id },
      {
        status: body.status,
        errorCode: body.error_code,
        errorMessage: body.error_message,
        providerMetadata: body.provider_metadata,
      },
      { type: 'api' },
      tx,
    ),
  );
  return {
    success: true,
    updated: result.updated,
    message: result.updated
      ? `Status set to ${body.status}`
      : `Status ${body.status} ignored: the message is already at or past it`,
  };
}
