import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { businesses, type BusinessSettings } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { displayPhone } from '@/server/lib/phone';
import { QUEUES } from '@/server/jobs/queues';
import { touchConversations } from '@/server/services/conversations/activity';
import { insertMessages } from '@/server/services/messages/insert';
import { configuredSmsProvider } from '@/server/services/messages/providers-config';
import { smsSegments } from '@/server/shared/sms-segments';

/**
 * The two texts the system sends by itself in answer to an inbound SMS (docs/api.md#opt-out-wording):
 * the one confirmation of an opt-out and the answer to HELP / INFO. Both go to a client who may have
 * opted out (the confirmation always does), so the send worker lets exactly these through:
 *
 * - the row is marked in columns no API caller can write: `sender_type = 'system'`, `response_id` =
 *   the inbound message answered (set nowhere else), `provider_metadata.auto_reply` = the kind;
 * - only on its first attempt (a retry or re-queue is a new attempt, `attempts` > 1, and is refused
 *   like any text to an opted-out client);
 * - a confirmation only within 5 minutes of the opt-out (the FCC rule's window), the HELP answer
 *   whenever its first attempt goes out.
 */
export type AutoReply = 'opt_out_confirmation' | 'help';

/**
 * For the send worker's query (`m` the message, the caller tests the client's opt-out): true when
 * the message may go to a client who opted out of SMS (never null: a null would read as "not opted out").
 */
export const AUTO_REPLY_PASSES_OPT_OUT = sql`coalesce(m.response_id is not null and m.sender_type = 'system' and m.attempts = 1
  and (m.provider_metadata->>'auto_reply' = 'help'
       or (m.provider_metadata->>'auto_reply' = 'opt_out_confirmation' and m.created_at > now() - interval '5 minutes')), false)`;

/** The business's confirmation text: its setting, the default when unset (null), none when set to "". */
export function optOutConfirmationText(settings: BusinessSettings, businessName: string): string | null {
  const set = settings.opt_out_confirmation;
  if (set === undefined || set === null) {
    return `${businessName}: You're unsubscribed and will get no more texts. Reply START to resubscribe.`;
  }
  return set.trim() || null;
}

/** The business's HELP answer: its setting, the default when unset (null), none when set to "". */
export function helpReplyText(settings: BusinessSettings, businessName: string, number: string, country: string): string | null {
  const set = settings.help_reply;
  if (set === undefined || set === null) {
    return `${businessName}: for help call ${displayPhone(number, country)} or reply here. Reply STOP to opt out. Msg&data rates may apply.`;
  }
  return set.trim() || null;
}

export type InboundContext = {
  businessId: number;
  conversationId: number;
  clientId: number;
  /** The inbound message answered. */
  messageId: number;
  messageSid: string;
  /** The client's number (the inbound From). */
  clientPhone: string;
  /** The business number the client texted (the inbound To): the answer comes from it. */
  businessPhone: string;
};

export async function businessForReplies(businessId: number, tx: Tx) {
  const [row] = await tx
    .select({ name: businesses.name, timezone: businesses.timezone, country: businesses.country, settings: businesses.settings })
    .from(businesses)
    .where(eq(businesses.id, businessId))
    .limit(1);
  return row!;
}

/**
 * The HELP answer is sent at most once per conversation per day (the business's day). The caller
 * holds the client's advisory lock (findOrCreateClientByPhone), so two HELPs of one client cannot
 * both find none.
 */
export async function helpAnsweredToday(conversationId: number, timezone: string, tx: Tx): Promise<boolean> {
  const rows = await tx.execute(sql`
    select 1 from messages
    where conversation_id = ${conversationId} and direction = 'outbound' and response_id is not null
      and provider_metadata->>'auto_reply' = 'help'
      and sent_at >= date_trunc('day', now() at time zone ${timezone}) at time zone ${timezone}
    limit 1`);
  return rows.length > 0;
}

/**
 * Queues an automatic answer in the inbound message's transaction: an outbound system TEXT in the
 * conversation (so the timeline shows it), from the number the client texted, with its send job.
 * The inbound message is unique per MessageSid and this runs only when it is new, so a redelivered
 * webhook never queues a second answer. Returns the message id.
 */
export async function queueAutoReply(inbound: InboundContext, kind: AutoReply, content: string, tx: Tx): Promise<number> {
  const segments = smsSegments(content);
  const [row] = await insertMessages(
    [
      {
        businessId: inbound.businessId,
        conversationId: inbound.conversationId,
        clientId: inbound.clientId,
        channel: 'sms',
        direction: 'outbound',
        messageType: 'TEXT',
        category: 'transactional',
        senderType: 'system',
        receiverType: 'client',
        receiverId: inbound.clientId,
        content,
        fromAddress: inbound.businessPhone,
        toAddress: inbound.clientPhone,
        status: 'queued',
        origin: 'system',
        provider: configuredSmsProvider(),
        providerMetadata: { auto_reply: kind, in_reply_to_sid: inbound.messageSid },
        responseId: inbound.messageId,
        requestId: randomUUID(),
        isRead: true,
        attempts: 1,
        segments: segments.segments,
        encoding: segments.encoding,
        // After the inbound message (its sent_at is taken the same way), so the timeline reads in order.
        sentAt: new Date(),
      },
    ],
    tx,
  );
  const id = row!.id;
  await touchConversations([row!], tx);
  await enqueue(tx, QUEUES.smsSend, [{ data: { messageId: id, businessId: inbound.businessId } }]);
  return id;
}
