import { and, asc, eq, sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { equalsAny } from '@/db/sql-array';
import { businesses, clients, type MessageStatus, type QuietHoursWindow } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { normalizePhone } from '@/server/lib/phone';
import { MAX_ATTACHMENT_BYTES } from '@/server/shared/limits';
import { NO_MARKETING_CONSENT, OPTED_OUT } from '@/server/services/messages/lifecycle';
import { addressesWithMarketingWithdrawn, clientsWithMarketingConsent } from '@/server/services/compliance/consent';
import { suppressedAddresses, suppressionAddress } from '@/server/services/messages/suppression';
import { heldByQuietHours } from '@/server/shared/quiet-hours';
import {
  holdUntil,
  lastInboundWithinADay,
  recipientWindow,
  sendingRules,
  type SendingRules,
} from '@/server/services/compliance/quiet-hours';
import type { Channel, EmailBody, Mode, NewItem, Planned, SmsBody, SubmitOptions } from './types';

/**
 * The plan stage of a submission (docs/api.md#queue-mode, #record-mode): each new item's client and
 * destination, its quiet hours, and its refusal for an opt-out or missing marketing consent, as the
 * row it will be; what cannot be planned is a 422 issue.
 */

/** Bytes a base64 attachment decodes to (line breaks and padding are not data). */
export const decodedSize = (base64: string) => Buffer.from(base64, 'base64').length;

/** What planning a message needs of its client. */
const CLIENT_COLUMNS = {
  id: clients.id,
  phoneNumber: clients.phoneNumber,
  email: clients.email,
  timezone: clients.timezone,
  locationId: clients.locationId,
};
type ClientRow = Pick<typeof clients.$inferSelect, keyof typeof CLIENT_COLUMNS>;

export type PlanOptions = {
  tx: Tx;
  business: typeof businesses.$inferSelect;
  channel: Channel;
  mode: Mode;
  /** The request's sender (validateRequest). */
  from: string;
  fresh: NewItem[];
  /** Where a bad item's 422 is collected. */
  issues: ValidationIssue[];
  /** Whether each recipient's marketing consent is needed (docs/api.md#consent). */
  marketing: boolean;
  sendAt: Date | null;
  /** quietHoursFor's answer: null when the request's texts go regardless of quiet hours. */
  quiet: QuietHoursPlan | null;
};

/** Resolves every new item's client and destination with two queries, collecting 422s. */
export async function planNewMessages({
  tx,
  business,
  channel,
  mode,
  from,
  fresh,
  issues,
  marketing,
  sendAt,
  quiet,
}: PlanOptions): Promise<Planned[]> {
  const loc = (index: number, field: string) => ['body', 'messages', index, field] as ValidationIssue['loc'];
  const clientIds = [...new Set(fresh.flatMap(({ item }) => (item.client_id !== undefined ? [item.client_id] : [])))];
  const phones = new Map<number, string>();
  const emails = new Map<number, string>();
  for (const { item, index } of fresh) {
    if (channel === 'sms' && 'to_number' in item && item.to_number !== undefined) {
      const phone = normalizePhone(item.to_number, business.country);
      if (phone) phones.set(index, phone);
      else issues.push({ loc: loc(index, 'to_number'), msg: 'is not a phone number', type: 'value_error' });
    }
    if (channel === 'email' && 'to_email' in item && item.to_email !== undefined) emails.set(index, item.to_email);
    if (channel === 'email' && 'attachments' in item) {
      item.attachments?.forEach((a, ai) => {
        if (a.content && decodedSize(a.content) > MAX_ATTACHMENT_BYTES) {
          throw new AppError('payload_too_large', `messages[${index}].attachments[${ai}] is over 5 MiB`);
        }
      });
    }
  }

  const known = new Map<number, ClientRow>();
  if (clientIds.length) {
    const rows = await tx
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(clients.id, clientIds, 'int')));
    rows.forEach((c) => known.set(c.id, c));
  }
  // Clients found by destination (oldest first wins when several share a phone or address).
  const byPhone = new Map<string, ClientRow>();
  const byEmail = new Map<string, ClientRow>();
  const lookupPhones = [...new Set([...phones.values()])];
  const lookupEmails = [...new Set([...emails.values()])];
  if (lookupPhones.length) {
    const rows = await tx
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(clients.phoneNumber, lookupPhones, 'text')))
      .orderBy(asc(clients.id));
    for (const c of rows) if (!byPhone.has(c.phoneNumber!)) byPhone.set(c.phoneNumber!, c);
  }
  if (lookupEmails.length) {
    const rows = await tx
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(sql`lower(${clients.email})`, lookupEmails, 'text')))
      .orderBy(asc(clients.id));
    for (const c of rows) if (!byEmail.has(c.email!.toLowerCase())) byEmail.set(c.email!.toLowerCase(), c);
  }

  // Every address this request can send to: the given destinations and the named clients'.
  const destinations = [
    ...(channel === 'sms' ? lookupPhones : lookupEmails),
    ...[...known.values()].flatMap((c) => {
      const own = channel === 'sms' ? c.phoneNumber : c.email?.toLowerCase();
      return own ? [own] : [];
    }),
  ];
  const [suppressed, consenting, withdrawn] = await Promise.all([
    // Opt-outs go by the recipient's address, whichever client row carries it: one query for every destination.
    mode === 'send' ? suppressedAddresses(business.id, channel, destinations, tx) : new Set<string>(),
    // Marketing consent is the recipient client's (a new lead has none): one query for the clients known so far.
    marketing
      ? clientsWithMarketingConsent(
          business.id,
          channel,
          [...known.keys(), ...[...byPhone.values(), ...byEmail.values()].map((c) => c.id)],
          tx,
        )
      : new Set<number>(),
    // ...and no client of the business with the destination address has withdrawn it (docs/api.md#consent).
    marketing ? addressesWithMarketingWithdrawn(business.id, channel, destinations, tx) : new Set<string>(),
  ]);

  // When each recipient's window next opens: the same for every recipient with the same window
  // (a request's recipients share a few time zones), and reading a zone's clock is the costly part.
  const openings = new Map<string, Date>();
  const openingOf = (window: QuietHoursWindow, at: Date) => {
    const key = `${window.time_zone} ${window.start} ${window.end}`;
    let opening = openings.get(key);
    if (opening === undefined) openings.set(key, (opening = holdUntil(window, at)));
    return opening;
  };

  const planned: Planned[] = [];
  for (const { item, index } of fresh) {
    let client: ClientRow | undefined;
    if (item.client_id !== undefined) {
      client = known.get(item.client_id);
      if (!client) {
        issues.push({
          loc: loc(index, 'client_id'),
          msg: `Client ${item.client_id} not found in this business`,
          type: 'value_error',
        });
        continue;
      }
    }
    const givenTo = channel === 'sms' ? phones.get(index) : emails.get(index);
    // docs/api.md#recipients: a send to a named client goes to that client's own address. Another
    // address with it would be sent on the named client's opt-outs, consent and quiet hours, and
    // filed in their conversation. Record mode files history as given (the number may have changed since).
    if (mode === 'send' && client && givenTo !== undefined) {
      const own = channel === 'sms' ? client.phoneNumber : (client.email?.toLowerCase() ?? null);
      if (own !== givenTo) {
        const field = channel === 'sms' ? 'to_number' : 'to_email';
        issues.push({
          loc: loc(index, field),
          msg: `is not the ${channel === 'sms' ? 'phone number' : 'email address'} of client ${client.id}; give ${field} alone to send elsewhere`,
          type: 'value_error',
        });
        continue;
      }
    }
    // docs/api.md#consent: a marketing email goes to its client alone; a copy would reach addresses
    // whose consent nobody asked.
    const copies = (['cc_email', 'bcc_email'] as const).find(
      (f) => f in item && ((item as Record<typeof f, unknown[] | undefined>)[f]?.length ?? 0) > 0,
    );
    if (marketing && copies) {
      issues.push({
        loc: loc(index, copies),
        msg: 'A campaign, marketing email or review request goes to its client alone: cc and bcc are not allowed',
        type: 'value_error',
      });
      continue;
    }
    if (!client && givenTo) client = channel === 'sms' ? byPhone.get(givenTo) : byEmail.get(givenTo);
    const to = givenTo ?? (channel === 'sms' ? client?.phoneNumber : client?.email?.toLowerCase()) ?? null;
    if (!to) {
      if (!issues.some((i) => i.loc[2] === index)) {
        issues.push({
          loc: loc(index, 'client_id'),
          msg: `Client has no ${channel === 'sms' ? 'phone number' : 'email address'}`,
          type: 'value_error',
        });
      }
      continue;
    }
    const inbound = mode === 'record' && item.direction === 'inbound';
    // docs/api.md#quiet-hours: a text held by quiet hours keeps to its recipient's window; queued
    // (or scheduled) while that window is closed, it is scheduled for the next opening instead.
    const window = quiet ? windowOf(quiet.rules, client, to) : null;
    const at = sendAt ?? quiet?.now ?? null;
    const opening = window && at ? openingOf(window, at) : null;
    const held = opening !== null && opening.getTime() > at!.getTime();
    const optedOut = mode === 'send' && suppressed.has(suppressionAddress(channel, to));
    const refusal = optedOut
      ? { code: OPTED_OUT.code, reason: OPTED_OUT.reason[channel] }
      : marketing && !(client && consenting.has(client.id) && !withdrawn.has(to))
        ? { code: NO_MARKETING_CONSENT.code, reason: NO_MARKETING_CONSENT.reason[channel] }
        : null;
    const status: MessageStatus =
      // docs/api.md#record-mode: inbound messages are `received` and stay so, whatever the item says.
      mode === 'send'
        ? refusal
          ? 'failed'
          : sendAt || held
            ? 'scheduled'
            : 'queued'
        : inbound
          ? 'received'
          : (item.status ?? 'sent');
    planned.push({
      index,
      clientId: client?.id ?? null,
      newLead: client ? null : channel === 'sms' ? { phone: to } : { email: to },
      to: inbound ? from : to,
      from: inbound ? to : from,
      // A saved reply's item gets its text once resolved (fillFromSavedReplies).
      content: item.message ?? '',
      subject: 'subject' in item ? (item.subject ?? null) : null,
      status,
      direction: inbound ? 'inbound' : 'outbound',
      errorCode: refusal?.code ?? null,
      errorMessage: refusal?.reason ?? null,
      sendAt: held && status === 'scheduled' ? opening : sendAt,
      quietHours: window,
      holdReason: held && status === 'scheduled' ? 'quiet_hours' : null,
      item,
    });
  }
  return planned;
}

export type QuietHoursPlan = { rules: SendingRules; now: Date };

/** Whether this request's texts keep to quiet hours (SubmitOptions); null when they go regardless. */
export async function quietHoursFor({
  tx,
  businessId,
  body,
  options,
}: {
  tx: Tx;
  businessId: number;
  body: SmsBody | EmailBody;
  options: SubmitOptions;
}): Promise<QuietHoursPlan | null> {
  const now = new Date();
  if (options.staffReply) {
    if (options.staffReply.sendNow) return null;
    if (await lastInboundWithinADay(businessId, options.staffReply.conversationId, now, tx)) return null;
  } else if (
    !heldByQuietHours(body.category, body.notification_type) ||
    (body as { override_quiet_hours?: boolean }).override_quiet_hours
  ) {
    return null;
  }
  return { rules: await sendingRules(businessId, tx), now };
}

/** The recipient's window without where its clock came from (what the message stores). */
function windowOf(rules: SendingRules, client: ClientRow | undefined, phone: string): QuietHoursWindow {
  const { time_zone, start, end } = recipientWindow(rules, {
    timeZone: client?.timezone ?? null,
    phoneNumber: phone,
    locationId: client?.locationId ?? null,
  });
  return { time_zone, start, end };
}
