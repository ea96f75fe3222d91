import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { clients, consents, type ConsentChannel } from '@/db/schema';
import { AppError } from '@/server/errors';
import { recordEvents, staffOrApi, type NewEvent } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';
import type { ClientImportRow } from '@/server/jobs/queues';
import type { ClientConsents, ConsentRecord, ConsentRequest } from '@/server/schemas/consent';
import { MARKETING_CATEGORIES, MARKETING_NOTIFICATION_TYPES } from '@/server/shared/consent';

/**
 * Consent records (docs/api.md#consent): the one module that writes `consents` and says how to read
 * them. Records are appended, never changed: a client's consent for a channel and purpose is the
 * latest record by `recorded_at` (ties: the later record), and the earlier ones remain the proof.
 * Sources: REST (`api` unless named), the inbox's client panel (`staff`, with who recorded it) and
 * the onboarding import (`import`, inserted with the clients in the same transaction).
 */

/** How many records a client's history answers with, newest first. */
const HISTORY_LIMIT = 200;

type Row = typeof consents.$inferSelect;

const toRecord = (r: Row): ConsentRecord => ({
  consent_id: r.id,
  client_id: r.clientId,
  channel: r.channel,
  purpose: r.purpose,
  status: r.status,
  source: r.source,
  note: r.note,
  recorded_at: r.recordedAt.toISOString(),
  recorded_by_staff_id: r.recordedByStaffId,
  created_at: r.createdAt.toISOString(),
});

async function requireClient(businessId: number, clientId: number, tx: Tx = db): Promise<void> {
  const [found] = await tx
    .select({ id: clients.id })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.id, clientId)))
    .limit(1);
  if (!found) throw AppError.notFound('Client');
}

/** Appends one record for a client of the business (404 for a client it does not have). */
export async function recordConsent(
  businessId: number,
  clientId: number,
  input: ConsentRequest,
  recordedByStaffId: number | null,
  tx: Tx = db,
): Promise<ConsentRecord> {
  return tx.transaction(async (tx) => {
    await requireClient(businessId, clientId, tx);
    const [row] = await tx
      .insert(consents)
      .values({
        businessId,
        clientId,
        channel: input.channel,
        purpose: input.purpose,
        status: input.status,
        source: input.source,
        note: input.note || null,
        // Never after now (docs/api.md#consent): the schema allowed a few seconds of clock skew, clamped
        // here by the database's clock, the one created_at is read from (consents_recorded_at_check).
        recordedAt: input.recorded_at ? sql`least(${input.recorded_at.toISOString()}::timestamptz, now())` : sql`now()`,
        recordedByStaffId,
      })
      .returning();
    const record = toRecord(row!);
    await recordEvents([consentEvent(businessId, record, staffOrApi(recordedByStaffId))], tx);
    return record;
  });
}

/** The `consent.recorded` event of a stored record (docs/architecture.md#event-log). */
function consentEvent(
  businessId: number,
  r: Pick<ConsentRecord, 'client_id' | 'channel' | 'purpose' | 'status' | 'source' | 'recorded_at'>,
  actor: EventActor,
): NewEvent {
  return {
    type: 'consent.recorded',
    businessId,
    clientId: r.client_id,
    actor,
    data: {
      client_id: r.client_id,
      channel: r.channel,
      purpose: r.purpose,
      status: r.status,
      source: r.source,
      recorded_at: r.recorded_at,
    },
  };
}

/** A client's current consent per channel and purpose, and its history, newest first. */
export async function clientConsents(businessId: number, clientId: number, tx: Tx = db): Promise<ClientConsents> {
  await requireClient(businessId, clientId, tx);
  const rows = await tx
    .select()
    .from(consents)
    .where(and(eq(consents.businessId, businessId), eq(consents.clientId, clientId)))
    .orderBy(desc(consents.recordedAt), desc(consents.id))
    .limit(HISTORY_LIMIT);
  const current = new Map<string, ConsentRecord>();
  const history = rows.map(toRecord);
  for (const r of history) if (!current.has(`${r.channel}:${r.purpose}`)) current.set(`${r.channel}:${r.purpose}`, r);
  return { client_id: clientId, current: [...current.values()], history };
}

/**
 * Inserts the consent records of imported clients in one statement, after the clients are upserted.
 * A record identical to a stored one (same client, channel, purpose, status, source and time) is
 * skipped, so a retried or replayed import chunk adds nothing twice; the import fixes `recorded_at`
 * when it normalises the request, for that reason.
 */
export async function importConsents(
  businessId: number,
  rows: readonly Pick<ClientImportRow, 'external_id' | 'consents'>[],
  tx: Tx,
): Promise<number> {
  const withConsents = rows.filter((r) => r.consents?.length);
  if (withConsents.length === 0) return 0;
  const docs = withConsents.map((r) => ({ external_id: r.external_id, consents: r.consents }));
  const inserted = await tx.execute<
    Pick<ConsentRecord, 'client_id' | 'channel' | 'purpose' | 'status' | 'source'> & { recorded_at: Date }
  >(sql`
    insert into consents (business_id, client_id, channel, purpose, status, source, note, recorded_at)
    select ${businessId}, c.id, x.channel, x.purpose, x.status, x.source, nullif(x.note, ''), a.recorded_at
    from jsonb_array_elements(${JSON.stringify(docs)}::jsonb) as r(doc)
    cross join lateral jsonb_to_recordset(r.doc->'consents')
      as x(channel text, purpose text, status text, source text, note text, recorded_at text)
    -- Never after now, as recordConsent (the request was read a moment ago, maybe by another clock).
    cross join lateral (select least(x.recorded_at::timestamptz, now()) as recorded_at) a
    join clients c on c.business_id = ${businessId} and c.external_id = r.doc->>'external_id'
    where not exists (
      select 1 from consents k
      where k.business_id = ${businessId} and k.client_id = c.id and k.channel = x.channel and k.purpose = x.purpose
        and k.status = x.status and k.source = x.source and k.recorded_at = a.recorded_at)
    returning client_id, channel, purpose, status, source, recorded_at`);
  await recordEvents(
    inserted.map((r) => consentEvent(businessId, { ...r, recorded_at: new Date(r.recorded_at).toISOString() }, { type: 'api' })),
    tx,
  );
  return inserted.length;
}

/** A client's latest marketing record's status for the channel (null without one): a probe of consents_current_idx. */
const latestMarketingStatusSql = (channel: ConsentChannel, businessId: SQL, clientId: SQL) =>
  sql`(select k.status from consents k
       where k.business_id = ${businessId} and k.client_id = ${clientId}
         and k.channel = ${sql.raw(`'${channel}'`)} and k.purpose = 'marketing'
       order by k.recorded_at desc, k.id desc limit 1)`;

/** The clients of business `businessId` whose address on the channel is `address` (clients_business_phone_idx / _email_idx). */
const clientsAtAddressSql = (channel: ConsentChannel, businessId: SQL, address: SQL) =>
  channel === 'sms'
    ? sql`c.business_id = ${businessId} and c.phone_number = ${address}`
    : sql`c.business_id = ${businessId} and lower(c.email) = lower(${address})`;

/**
 * The send-time check, for a caller's own statement over `messages m`: true when the message needs
 * marketing consent (server/shared/consent.ts) and the client's latest marketing record for the
 * channel is not `given`, or the message does not go to that client's own address (a recorded
 * message re-queued, a number changed since), or a client of the business with the address the
 * message goes to has withdrawn it (docs/api.md#consent: consent follows the destination, so a number shared by a
 * family, or another client's number, is not texted on one client's word while another said no).
 */
export function marketingConsentMissingSql(channel: ConsentChannel): SQL {
  const list = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));
  return sql`((m.category in (${list(MARKETING_CATEGORIES)}) or m.notification_type in (${list(MARKETING_NOTIFICATION_TYPES)}))
    and (coalesce(${latestMarketingStatusSql(channel, sql`m.business_id`, sql`m.client_id`)} = 'given', false) = false
         or not exists (select 1 from clients c where c.id = m.client_id and ${clientsAtAddressSql(channel, sql`m.business_id`, sql`m.to_address`)})
         or exists (select 1 from clients c
                    where ${clientsAtAddressSql(channel, sql`m.business_id`, sql`m.to_address`)}
                      and ${latestMarketingStatusSql(channel, sql`c.business_id`, sql`c.id`)} = 'withdrawn')))`;
}

/**
 * Of these destination addresses (E.164 phones, or lower-case emails), those a client of the
 * business has withdrawn marketing consent for on the channel (their latest record): submission's
 * half of the rule marketingConsentMissingSql applies at send time. One query.
 */
export async function addressesWithMarketingWithdrawn(
  businessId: number,
  channel: ConsentChannel,
  addresses: readonly string[],
  tx: Tx,
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await tx.execute<{ address: string }>(sql`
    select distinct a.address from unnest(${sql.param([...new Set(addresses)])}::text[]) a(address)
    join clients c on ${clientsAtAddressSql(channel, sql`${businessId}`, sql`a.address`)}
    where ${latestMarketingStatusSql(channel, sql`c.business_id`, sql`c.id`)} = 'withdrawn'`);
  return new Set(rows.map((r) => (channel === 'email' ? r.address.toLowerCase() : r.address)));
}

/** Of these clients, those whose latest marketing consent for the channel is `given` (one query). */
export async function clientsWithMarketingConsent(
  businessId: number,
  channel: ConsentChannel,
  clientIds: readonly number[],
  tx: Tx,
): Promise<Set<number>> {
  if (clientIds.length === 0) return new Set();
  const rows = await tx.execute<{ client_id: number }>(sql`
    select latest.client_id from (
      select distinct on (k.client_id) k.client_id, k.status from consents k
      where k.business_id = ${businessId} and k.client_id = any(${sql.param([...new Set(clientIds)])}::int[])
        and k.channel = ${channel} and k.purpose = 'marketing'
      order by k.client_id, k.recorded_at desc, k.id desc
    ) latest where latest.status = 'given'`);
  return new Set(rows.map((r) => r.client_id));
}
