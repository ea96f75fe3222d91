import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/db/client';
import { clients, messages, type MessageStatus, type Provider } from '@/db/schema';
import { AppError } from '@/server/errors';
import { publish } from '@/server/realtime/publish';

const ERROR_STATUSES: MessageStatus[] = ['failed', 'undelivered', 'bounced'];

/**
 * The columns a message gets when it goes back to `queued` for another attempt (retry, re-queue):
 * the earlier attempt's provider id is moved aside, so that attempt's late callbacks no longer
 * match the message, a crash of the new attempt is recognised (`sending` without a provider id)
 * and reconciliation never takes the earlier attempt for the new one.
 */
export const NEW_ATTEMPT = {
  status: 'queued' as const,
  errorCode: null,
  errorMessage: null,
  attempts: sql`${messages.attempts} + 1`,
  statusUpdatedAt: sql`now()`,
  previousProviderMessageIds: sql`case when ${messages.providerMessageId} is null then ${messages.previousProviderMessageIds}
    else array_append(coalesce(${messages.previousProviderMessageIds}, '{}'), ${messages.providerMessageId}) end`,
  providerMessageId: null,
  emailMessageId: null,
};

export type StatusUpdate = {
  status: MessageStatus;
  errorCode?: string | null;
  errorMessage?: string | null;
  providerMetadata?: Record<string, unknown> | null;
};

type Target = { businessId: number; messageId: number } | { businessId?: number; provider?: Provider; providerMessageId: string };

/**
 * Moves one message's status forward (SPEC §4.1) in a single conditional UPDATE: the new status
 * is applied only when it ranks higher than the stored one, so late, duplicate or reordered
 * callbacks can never move a message back. Returns the number of rows changed (0 or 1) and the
 * message it matched, or null when nothing matched. Used by the REST status endpoints, the
 * provider webhooks and the sandbox provider alike.
 */
export async function applyStatusUpdate(
  target: Target,
  update: StatusUpdate,
  tx: Tx = db,
): Promise<{ updated: number; messageId: number | null }> {
  const where =
    'messageId' in target
      ? and(eq(messages.businessId, target.businessId), eq(messages.id, target.messageId))
      : and(
          eq(messages.providerMessageId, target.providerMessageId),
          target.provider ? eq(messages.provider, target.provider) : undefined,
          target.businessId !== undefined ? eq(messages.businessId, target.businessId) : undefined,
        );
  const carriesError = ERROR_STATUSES.includes(update.status);
  const rows = await tx
    .update(messages)
    .set({
      status: update.status,
      statusUpdatedAt: sql`now()`,
      errorCode: carriesError ? (update.errorCode ?? null) : null,
      errorMessage: carriesError ? (update.errorMessage ?? null) : null,
      providerMetadata: update.providerMetadata
        ? sql`coalesce(${messages.providerMetadata}, '{}'::jsonb) || ${JSON.stringify(update.providerMetadata)}::jsonb`
        : undefined,
    })
    .where(
      and(
        where,
        sql`message_status_rank(${messages.status}, ${messages.messageType}) < message_status_rank(${update.status}, ${messages.messageType})`,
      ),
    )
    .returning({ id: messages.id, businessId: messages.businessId, conversationId: messages.conversationId });
  if (rows[0]) {
    await publish(tx, {
      type: 'message.status',
      businessId: rows[0].businessId,
      conversationIds: [rows[0].conversationId],
      messageIds: [rows[0].id],
    });
    return { updated: 1, messageId: rows[0].id };
  }
  const [existing] = await tx.select({ id: messages.id }).from(messages).where(where).limit(1);
  return { updated: 0, messageId: existing?.id ?? null };
}

/** REST `POST /businesses/{id}/sms/status` and `/email/status`: by our id or the provider's. */
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
) {
  const field = body.message_id !== undefined ? 'message_id' : 'provider_message_id';
  const [found] = await db
    .select({ id: messages.id, channel: messages.channel })
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
  const result = await db.transaction((tx) =>
    applyStatusUpdate(
      { businessId, messageId: found.id },
      {
        status: body.status,
        errorCode: body.error_code,
        errorMessage: body.error_message,
        providerMetadata: body.provider_metadata,
      },
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

/** Twilio 21610, a STOP reply, a SendGrid unsubscribe: the client no longer receives that channel. */
export async function markClientOptedOut(
  tx: Tx,
  businessId: number,
  clientId: number,
  channel: 'sms' | 'email',
  optedOut = true,
) {
  await tx
    .update(clients)
    .set(
      channel === 'sms' ? { optedOutSms: optedOut, updatedAt: sql`now()` } : { optedOutEmail: optedOut, updatedAt: sql`now()` },
    )
    .where(and(eq(clients.businessId, businessId), eq(clients.id, clientId)));
}
