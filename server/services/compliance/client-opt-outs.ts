import { and, desc, eq, or, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { clients, messages, optOutEvents, optOuts, type OptOutChannel } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { ClientOptOutHistory, OptInRequest, OptOutRecord } from '@/server/schemas/opt-outs';
import { clientDetails } from '@/server/services/conversations';
import { requireStaff } from '@/server/services/directory';
import { clientOptedOutColumns, lockOptOut, optIn, optOut, suppressionAddress } from '@/server/services/messages/suppression';
import { equalsAny } from '@/db/sql-array';

/**
 * Setting a client's opt-out explicitly (docs/api.md#opt-out): staff in the inbox (`staff`) or an
 * API caller (`api`) opt the client's current phone number out of SMS, or their email out of email,
 * or back in. Like every opt-out it belongs to the address, so every client row of the business
 * with that address shows it and every one of their conversations is refreshed in the inbox.
 *
 * Opting back in is a record, not a delete (suppression.ts), and an opt-out the client made (their
 * STOP, a provider's report of their unsubscribe, a likely opt-out of theirs staff confirmed, an
 * import's) is lifted here only by an opt-in that states how the client asked: `source` and `note`.
 * Their own START, UNSTOP or YES needs no one (twilio-inbound.ts). Only an opt-out staff or the API
 * set by hand, for no message of the client's, may be undone without them.
 */

/** How many records a client's opt-out history answers with, newest first. */
const HISTORY_LIMIT = 200;

/** Who acts: the door (`staff` for the inbox, `api` for REST) and the staff member, when one acts. */
export type OptOutActor = { via: 'staff' | 'api'; staffId: number | null };

type CurrentOptOut = typeof optOuts.$inferSelect;

/** An opt-out staff or the API set by hand (PUT, the inbox's Opt out): the only kind undone without the client's request. */
const setByHand = (o: CurrentOptOut) => (o.source === 'staff' || o.source === 'api') && o.messageId === null;

const what = (channel: OptOutChannel) => (channel === 'sms' ? 'texts' : 'email');

/** Why an opt-out stands, in words (the refusal says it). `text`: the client's message that caused it, if stored. */
function cause(o: CurrentOptOut, text: string | null): string {
  const quoted = text ? ` "${text.length > 60 ? `${text.slice(0, 60)}…` : text}"` : '';
  switch (o.source) {
    case 'keyword':
      return `the client texted${quoted || ' an opt-out keyword'}`;
    case 'provider_error':
      return o.channel === 'sms'
        ? 'the carrier refused a text because the number had unsubscribed (Twilio 21610)'
        : 'the email provider reported an unsubscribe, a spam report or a bounce';
    case 'import':
      return 'an import marked it opted out';
    case 'migrated':
      return 'an earlier version recorded it';
    default:
      return `staff confirmed the client's text${quoted} as an opt-out`;
  }
}

function refusal(o: CurrentOptOut, text: string | null, statement: Pick<OptInRequest, 'source' | 'note'>): AppError {
  const why =
    `${o.address} is opted out of ${what(o.channel)} because ${cause(o, text)} (${o.createdAt.toISOString()}). ` +
    'An opt-out the client made stands until the client asks: ' +
    (o.channel === 'sms' ? 'they text START, UNSTOP or YES from that number, or you ' : 'you ') +
    'state how they asked (source) and their words or the circumstances (note)';
  const issues: ValidationIssue[] = [];
  if (!statement.source) issues.push({ loc: ['body', 'source'], msg: why, type: 'missing' });
  if (!statement.note)
    issues.push({
      loc: ['body', 'note'],
      msg: statement.source ? why : "Required: the client's words or the circumstances of the request",
      type: 'missing',
    });
  return new AppError('validation', why, { issues });
}

/**
 * Opts the client's address out of (or back into) the channel. An opt-in may carry what the client
 * asked (`statement`), which lifting an opt-out the client made requires (422 at `source` / `note`,
 * saying why, otherwise); an opt-out may carry its reason (`statement.note`: the inbox asks for one),
 * kept in the history record and shown in the timeline's activity line. Answers the client's details.
 */
export async function setClientOptOut(
  businessId: number,
  clientId: number,
  channel: OptOutChannel,
  optedOut: boolean,
  actor: OptOutActor,
  statement: Pick<OptInRequest, 'source' | 'note'> = {},
  tx: Tx = db,
) {
  const [client] = await tx
    .select({ phone: clients.phoneNumber, email: clients.email })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.id, clientId)))
    .limit(1);
  if (!client) throw AppError.notFound('Client');
  const address = suppressionAddress(channel, (channel === 'sms' ? client.phone : client.email) ?? '');
  if (!address) {
    const kind = channel === 'sms' ? 'mobile number' : 'email address';
    throw AppError.invalid(['path', 'channel'], `This client has no ${kind} to opt ${optedOut ? 'out' : 'in'}`, 'missing');
  }
  if (actor.staffId !== null) await requireStaff(businessId, actor.staffId, ['body', 'staff_id'], tx);
  const target = { businessId, channel, address, staffId: actor.staffId };
  await tx.transaction(async (tx) => {
    // The conversations at the address are locked first, in id order, as a staff member's decision
    // on a possible opt-out locks its conversation before the opt-out: taken the other way round,
    // the two deadlocked (counts.test.ts). The lookups use the clients' (business_id,
    // phone_number) and (business_id, lower(email)) indexes.
    const sameAddress = channel === 'sms' ? sql`cl.phone_number = ${address}` : sql`lower(cl.email) = ${address}`;
    const shown = await tx.execute<{ id: number }>(sql`
      select c.id from clients cl join conversations c on c.business_id = cl.business_id and c.client_id = cl.id
      where cl.business_id = ${businessId} and ${sameAddress}
      order by c.id for no key update of c`);
    if (optedOut) await optOut({ ...target, source: actor.via, note: statement.note || null }, tx);
    else await optBackIn(target, actor, statement, tx);
    // Staff (or the API) decided about texts, either way: a possible opt-out left pending by an
    // inbound text is settled too (docs/api.md#possible-opt-outs).
    if (channel === 'sms' && shown.length > 0) {
      await tx.execute(sql`update conversations set possible_opt_out_message_id = null
        where business_id = ${businessId} and ${equalsAny(
          sql`id`,
          shown.map((r) => r.id),
          'int',
        )}
          and possible_opt_out_message_id is not null`);
    }
  });
  return (await clientDetails(businessId, clientId, tx))!;
}

/** The opt-in, under the lock of the opt-out it lifts (a STOP arriving meanwhile is not lifted unseen). */
async function optBackIn(
  target: { businessId: number; channel: OptOutChannel; address: string; staffId: number | null },
  actor: OptOutActor,
  statement: Pick<OptInRequest, 'source' | 'note'>,
  tx: Tx,
): Promise<void> {
  const current = await lockOptOut(target, tx);
  if (!current) return; // not opted out: nothing to lift, nothing to record
  if (!setByHand(current) && !(statement.source && statement.note)) {
    const [text] = current.messageId
      ? await tx
          .select({ content: messages.content })
          .from(messages)
          .where(and(eq(messages.businessId, target.businessId), eq(messages.id, current.messageId)))
      : [];
    throw refusal(current, text?.content ?? null, statement);
  }
  await optIn({ ...target, source: statement.source ?? actor.via, note: statement.note || null }, tx);
}

const toRecord = (r: typeof optOutEvents.$inferSelect): OptOutRecord => ({
  event_id: r.id,
  channel: r.channel,
  address: r.address,
  action: r.action,
  source: r.source,
  note: r.note,
  staff_id: r.staffId,
  message_id: r.messageId,
  created_at: r.createdAt.toISOString(),
});

/**
 * The opt-out history of the client's current phone number and email address (opt-outs and
 * opt-ins, newest first) and whether each is opted out now. 404 for a client the business does not have.
 */
export async function clientOptOutHistory(businessId: number, clientId: number, tx: Tx = db): Promise<ClientOptOutHistory> {
  const [client] = await tx.execute<{
    phone_number: string | null;
    email: string | null;
    opted_out_sms: boolean;
    opted_out_email: boolean;
  }>(sql`select cl.phone_number, cl.email, ${clientOptedOutColumns('cl')}
         from clients cl where cl.business_id = ${businessId} and cl.id = ${clientId}`);
  if (!client) throw AppError.notFound('Client');
  const phone = suppressionAddress('sms', client.phone_number ?? '');
  const email = suppressionAddress('email', client.email ?? '');
  const addresses = [
    ...(phone ? [and(eq(optOutEvents.channel, 'sms'), eq(optOutEvents.address, phone))] : []),
    ...(email ? [and(eq(optOutEvents.channel, 'email'), eq(optOutEvents.address, email))] : []),
  ];
  const rows = addresses.length
    ? await tx
        .select()
        .from(optOutEvents)
        .where(and(eq(optOutEvents.businessId, businessId), or(...addresses)))
        .orderBy(desc(optOutEvents.id))
        .limit(HISTORY_LIMIT)
    : [];
  return {
    client_id: clientId,
    opted_out_sms: client.opted_out_sms,
    opted_out_email: client.opted_out_email,
    history: rows.map(toRecord),
  };
}
