import { sql } from 'drizzle-orm';
import { db } from '@/db/client';
import type { StoredAttachment } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { trimEnd } from '@/server/lib/text';
import { countParam, param, type FormParams } from '@/server/providers/twilio-signature';
import { publish } from '@/server/realtime/publish';
import { insertMessages } from '@/server/services/messages/insert';
import { optIn, optOut } from '@/server/services/messages/suppression';
import { ensureConversations, touchConversations } from '@/server/services/conversations';
import { businessForNumber, findOrCreateClientByPhone } from '@/server/services/directory';
import { smsSegments } from '@/server/shared/sms-segments';
import { markEvent, processOrRetry, storeEvent } from './events';

/** docs/api.md#inbound-sms: the whole message must be the keyword (docs/providers.md#opt-out-keywords). */
const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT']);
const OPT_IN = new Set(['START', 'YES', 'UNSTOP']);

export function optKeyword(body: string): 'out' | 'in' | null {
  const word = trimEnd(body.trim().toUpperCase(), '.!');
  return OPT_OUT.has(word) ? 'out' : OPT_IN.has(word) ? 'in' : null;
}

/**
 * An inbound SMS (already verified and stored as event `eventId`): becomes a `received` TEXT in
 * the client's conversation, created with the client if new; unread +1, a resolved or snoozed
 * conversation reopens; STOP/START keywords flip the client's SMS opt-out. Idempotent: the message
 * is unique on (twilio, MessageSid), so reprocessing a stored event changes nothing twice.
 */
export async function processInboundSms(eventId: number, params: FormParams): Promise<void> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsMessageSid') ?? param(params, 'SmsSid')!;
  const to = normalizePhone(param(params, 'To') ?? '') ?? param(params, 'To') ?? '';
  const body = param(params, 'Body') ?? '';
  // Twilio's ids are 34 characters and numbers are short: anything far longer is not Twilio's.
  if (sid.length > 64 || (param(params, 'From') ?? '').length > 64 || to.length > 64) {
    await markEvent(eventId, 'ignored', { error: 'MessageSid, From or To is not a Twilio value' });
    return;
  }
  await db.transaction(async (tx) => {
    const business = await businessForNumber(to, tx);
    if (!business) {
      await markEvent(eventId, 'ignored', { error: `No business owns ${to}` }, tx);
      return;
    }
    const from = normalizePhone(param(params, 'From') ?? '', business.country) ?? param(params, 'From') ?? '';
    const clientId = await findOrCreateClientByPhone(tx, business.businessId, from);
    const conversationId = (await ensureConversations(tx, business.businessId, [clientId])).get(clientId)!;
    const media: StoredAttachment[] = [];
    const count = countParam(params, 'NumMedia') ?? 0;
    for (let i = 0; i < count && i < 10; i++) {
      const url = param(params, `MediaUrl${i}`);
      if (url)
        media.push({ filename: `media-${i}`, content_type: param(params, `MediaContentType${i}`) ?? null, url, size: null });
    }
    const existing = await tx.execute(
      sql`select 1 from messages where provider = 'twilio' and provider_message_id = ${sid} limit 1`,
    );
    if (existing.length === 0) {
      const segments = smsSegments(body);
      const [row] = await insertMessages(tx, [
        {
          businessId: business.businessId,
          conversationId,
          clientId,
          channel: 'sms',
          direction: 'inbound',
          messageType: 'TEXT',
          senderType: 'client',
          senderId: clientId,
          receiverType: 'staff',
          content: body,
          fromAddress: from,
          toAddress: to,
          attachments: media.length ? media : null,
          status: 'received',
          provider: 'twilio',
          providerMessageId: sid,
          providerMetadata: {
            AccountSid: param(params, 'AccountSid') ?? null,
            NumSegments: param(params, 'NumSegments') ?? null,
          },
          isRead: false,
          segments: countParam(params, 'NumSegments') ?? segments.segments,
          encoding: segments.encoding,
          sentAt: new Date(),
        },
      ]);
      await touchConversations(tx, [row!.id]);
      await publish(tx, {
        type: 'message.created',
        businessId: business.businessId,
        conversationIds: [conversationId],
        messageIds: [row!.id],
      });
      const keyword = optKeyword(body);
      if (keyword) {
        const target = { businessId: business.businessId, channel: 'sms' as const, address: from };
        await (keyword === 'out' ? optOut(tx, { ...target, source: 'keyword', messageId: row!.id }) : optIn(tx, target));
      }
    }
    await markEvent(eventId, 'processed', { businessId: business.businessId }, tx);
  });
}

/**
 * An inbound SMS webhook (verified): stored raw, deduplicated by MessageSid, then processed (a
 * failure is retried by a job). A redelivery, or a form without a MessageSid, does nothing.
 * `rawBody`: the exact request bytes, when the params had to be cleaned to be storable.
 */
export async function receiveInboundSms(
  params: FormParams,
  headers: Record<string, string>,
  rawBody: Buffer | null,
): Promise<void> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsMessageSid') ?? param(params, 'SmsSid');
  if (!sid) return;
  const eventId = await storeEvent({
    provider: 'twilio',
    kind: 'sms_incoming',
    dedupeKey: sid,
    headers,
    payload: params,
    rawBody,
  });
  if (eventId !== null) await processOrRetry(eventId, 'sms_incoming', () => processInboundSms(eventId, params));
}
