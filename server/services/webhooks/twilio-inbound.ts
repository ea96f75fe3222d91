import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import type { StoredAttachment } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { countParam, param, type FormParams } from '@/server/providers/twilio-signature';
import { insertMessages } from '@/server/services/messages/insert';
import { cancelScheduledOnReply } from '@/server/services/messages/lifecycle';
import { optIn, optOut } from '@/server/services/messages/suppression';
import { ensureConversations, touchConversations } from '@/server/services/conversations/activity';
import { businessForNumber, findOrCreateClientByPhone } from '@/server/services/directory';
import { smsSegments } from '@/server/shared/sms-segments';
import {
  businessForReplies,
  helpAnsweredToday,
  helpReplyText,
  optOutConfirmationText,
  queueAutoReply,
  type InboundContext,
} from '@/server/services/compliance/auto-replies';
import { classifyInbound, twilioConfirmsItself } from '@/server/services/compliance/opt-out-words';
import type { Classification } from '@/server/shared/inbound-keywords';
import { markEvent, processOrRetry, storeEvent } from './events';

/**
 * An inbound SMS (already verified and stored as event `eventId`): becomes a `received` TEXT in
 * the client's conversation, created with the client if new; unread +1, a resolved or snoozed
 * conversation reopens. Its wording is classified (docs/api.md#opt-out-wording): an opt-out opts the
 * client out of SMS and queues the one confirmation, START opts back in (either clears a pending
 * possible opt-out), HELP is answered, a likely opt-out is flagged and left pending for staff. Idempotent: the message is unique on (twilio, MessageSid), so
 * reprocessing a stored event changes nothing twice and never queues a second answer.
 */
export async function processInboundSms(eventId: number, params: FormParams, tx: Tx = db): Promise<void> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsMessageSid') ?? param(params, 'SmsSid')!;
  const to = normalizePhone(param(params, 'To') ?? '') ?? param(params, 'To') ?? '';
  const body = param(params, 'Body') ?? '';
  // Twilio's ids are 34 characters and numbers are short: anything far longer is not Twilio's.
  if (sid.length > 64 || (param(params, 'From') ?? '').length > 64 || to.length > 64) {
    await markEvent(eventId, 'ignored', { error: 'MessageSid, From or To is not a Twilio value' }, tx);
    return;
  }
  await tx.transaction(async (tx) => {
    const business = await businessForNumber(to, tx);
    if (!business) {
      await markEvent(eventId, 'ignored', { error: `No business owns ${to}` }, tx);
      return;
    }
    const from = normalizePhone(param(params, 'From') ?? '', business.country) ?? param(params, 'From') ?? '';
    const clientId = await findOrCreateClientByPhone(business.businessId, from, tx);
    const conversationId = (await ensureConversations(business.businessId, [clientId], tx)).get(clientId)!;
    const media: StoredAttachment[] = [];
    const count = countParam(params, 'NumMedia') ?? 0;
    for (let i = 0; i < count && i < 10; i++) {
      const url = param(params, `MediaUrl${i}`);
      if (url)
        media.push({ filename: `media-${i}`, content_type: param(params, `MediaContentType${i}`) ?? null, url, size: null });
    }
    // A redelivery is recognised within the business that owns the number: a provider id is unique
    // per business only (messages_provider_id_key), so another tenant's record of this sid must not
    // make this business's real text look delivered already.
    const existing = await tx.execute(
      sql`select 1 from messages
          where provider = 'twilio' and provider_message_id = ${sid} and business_id = ${business.businessId} limit 1`,
    );
    if (existing.length === 0) {
      const segments = smsSegments(body);
      const wording = classifyInbound(body);
      const [row] = await insertMessages(
        [
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
            origin: 'webhook',
            provider: 'twilio',
            providerMessageId: sid,
            providerMetadata: {
              AccountSid: param(params, 'AccountSid') ?? null,
              NumSegments: param(params, 'NumSegments') ?? null,
              ...(wording.class !== 'none' ? { keyword_class: wording.class, keyword_match: wording.match } : {}),
            },
            // A likely opt-out is not acted on: staff see it flagged and decide.
            flagged: wording.class === 'likely_opt_out',
            isRead: false,
            segments: countParam(params, 'NumSegments') ?? segments.segments,
            encoding: segments.encoding,
            sentAt: new Date(),
          },
        ],
        tx,
      );
      await touchConversations([row!], tx);
      // docs/api.md#send-later: a reminder never crosses the client's own reply.
      await cancelScheduledOnReply(business.businessId, conversationId, tx);
      if (wording.class === 'likely_opt_out') {
        // docs/api.md#counts: the conversation's flagged count moves with the flagged row; the text
        // becomes the conversation's pending possible opt-out for staff to decide
        // (docs/api.md#possible-opt-outs). A newer pending text is never replaced by an older one.
        await tx.execute(sql`update conversations set flagged_count = flagged_count + 1,
                               possible_opt_out_message_id = greatest(possible_opt_out_message_id, ${row!.id}::bigint)
                             where id = ${conversationId} and business_id = ${business.businessId}`);
      } else if (wording.class === 'opt_out' || wording.class === 'opt_in') {
        // The client decided for themselves: nothing earlier is left for staff to decide.
        await tx.execute(sql`update conversations set possible_opt_out_message_id = null
                             where id = ${conversationId} and business_id = ${business.businessId}
                               and possible_opt_out_message_id < ${row!.id}::bigint`);
      }
      await actOnWording(
        wording,
        body,
        {
          businessId: business.businessId,
          conversationId,
          clientId,
          messageId: row!.id,
          messageSid: sid,
          clientPhone: from,
          businessPhone: to,
        },
        tx,
      );
    }
    await markEvent(eventId, 'processed', { businessId: business.businessId }, tx);
  });
}

/**
 * What an inbound text's wording does (docs/api.md#opt-out-wording), in its transaction:
 * - `opt_out`: the client is opted out of SMS at once and, if they were not already, the business's
 *   one confirmation is queued, unless Twilio confirms the bare keyword itself (twilioConfirmsItself);
 * - `opt_in`: opted back in;
 * - `help`: the business's HELP answer, at most once per conversation per day, opted out or not.
 */
async function actOnWording(wording: Classification, body: string, inbound: InboundContext, tx: Tx): Promise<void> {
  const { businessId } = inbound;
  const number = { businessId, channel: 'sms' as const, address: inbound.clientPhone };
  if (wording.class === 'opt_out') {
    const newlyOptedOut = await optOut({ ...number, source: 'keyword', messageId: inbound.messageId }, tx);
    if (!newlyOptedOut || twilioConfirmsItself(body)) return;
    const business = await businessForReplies(businessId, tx);
    const text = optOutConfirmationText(business.settings, business.name);
    if (text) await queueAutoReply(inbound, 'opt_out_confirmation', text, tx);
  } else if (wording.class === 'opt_in') {
    // The number's own START lifts any opt-out of it, and is recorded with the text as its cause.
    await optIn({ ...number, source: 'keyword', messageId: inbound.messageId }, tx);
  } else if (wording.class === 'help') {
    const business = await businessForReplies(businessId, tx);
    const text = helpReplyText(business.settings, business.name, inbound.businessPhone, business.country);
    if (text && !(await helpAnsweredToday(inbound.conversationId, business.timezone, tx))) {
      await queueAutoReply(inbound, 'help', text, tx);
    }
  }
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
  tx: Tx = db,
): Promise<void> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsMessageSid') ?? param(params, 'SmsSid');
  if (!sid) return;
  const eventId = await storeEvent(
    {
      provider: 'twilio',
      kind: 'sms_incoming',
      dedupeKey: sid,
      headers,
      payload: params,
      rawBody,
    },
    tx,
  );
  if (eventId !== null) await processOrRetry(eventId, 'sms_incoming', () => processInboundSms(eventId, params, tx), tx);
}
