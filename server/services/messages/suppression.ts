import { and, eq, sql, type SQL } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { optOuts, type OptOutChannel, type OptOutEventSource, type OptOutSource } from '@/db/schema';
import { recordEvents, staffOrApi, type NewEvent } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';

/**
 * Suppression (docs/api.md#opt-out): the one module that writes `opt_outs` and `opt_out_events`,
 * and says how to read them. An opt-out belongs to a business and an address (E.164 number,
 * lower-cased email), not to a client row: every client row with that number or address is opted
 * out, and every send path checks the message's recipient address (submit, the send workers at send
 * time; the missed-call text goes through submit).
 *
 * `opt_outs` is the current state (a row: opted out), `opt_out_events` the history. Every write
 * below is one statement that changes the state and appends the record of that change together,
 * and appends nothing when nothing changed: so the address is opted out exactly when its latest
 * record is an opt-out, while the send path's check stays one probe of opt_outs' unique key.
 *
 * Callers: a STOP/START reply (`keyword`), Twilio 21610 and SendGrid unsubscribe/spam
 * report/bounce (`provider_error`), a client's opt-out set by hand (`api` through REST, `staff` in
 * the inbox: compliance/client-opt-outs.ts) and a possible opt-out confirmed by staff (`staff`:
 * compliance/opt-out-review.ts); `import` from the onboarding import (optOutImportedClients); `migrated` rows came from the old per-client
 * flags (migration 0010).
 */

export type OptOutTarget = { businessId: number; channel: OptOutChannel; address: string };

/** Who did it and why, as the history records it. */
type Attribution = { staffId?: number | null; note?: string | null; messageId?: number | null };

/** The stored form of an address: email lower-cased and trimmed; a phone number is E.164 already. */
export const suppressionAddress = (channel: OptOutChannel, address: string) =>
  channel === 'email' ? address.trim().toLowerCase() : address.trim();

/**
 * Opts an address out of a channel, and records it. Idempotent: an existing opt-out keeps its first
 * cause and time, and a second one adds no record, with one exception: an opt-out staff or the API
 * set by hand (no message of the client's behind it) that the client's own one meets (a STOP, a
 * provider's report, a confirmed possible opt-out) becomes the client's, with a record, so that it
 * is no longer lifted without the client (compliance/client-opt-outs.ts). True when this call opted
 * it out or made it the client's.
 */
export async function optOut(target: OptOutTarget & Attribution & { source: OptOutSource }, tx: Tx): Promise<boolean> {
  const address = suppressionAddress(target.channel, target.address);
  if (!address) return false;
  const rows = await tx.execute<Recorded>(sql`
    with changed as (
      insert into opt_outs (business_id, channel, address, source, message_id)
      values (${target.businessId}, ${target.channel}, ${address}, ${target.source}, ${target.messageId ?? null})
      on conflict (business_id, channel, address) do update set source = excluded.source, message_id = excluded.message_id
        where opt_outs.source in ('staff', 'api') and opt_outs.message_id is null
          and not (excluded.source in ('staff', 'api') and excluded.message_id is null)
      returning business_id, channel, address, source, message_id
    )
    insert into opt_out_events (business_id, channel, address, action, source, note, staff_id, message_id)
    select business_id, channel, address, 'opt_out', source, ${target.note || null}, ${target.staffId ?? null}::int, message_id
    from changed
    ${RECORDED}`);
  await recordOptOutEvents(rows, tx);
  return rows.length > 0;
}

/**
 * Opts an address back in (START, an opt-in staff or the API made), and records it: who, how
 * (`source`), why (`note`, the START message). True when it was opted out (a record was added).
 * Whether this caller may lift the opt-out is the caller's rule (compliance/client-opt-outs.ts).
 */
export async function optIn(target: OptOutTarget & Attribution & { source: OptOutEventSource }, tx: Tx): Promise<boolean> {
  const address = suppressionAddress(target.channel, target.address);
  if (!address) return false;
  const rows = await tx.execute<Recorded>(sql`
    with changed as (
      delete from opt_outs
      where business_id = ${target.businessId} and channel = ${target.channel} and address = ${address}
      returning business_id, channel, address
    )
    insert into opt_out_events (business_id, channel, address, action, source, note, staff_id, message_id)
    select business_id, channel, address, 'opt_in', ${target.source}, ${target.note || null}, ${target.staffId ?? null}::int,
      ${target.messageId ?? null}::bigint
    from changed
    ${RECORDED}`);
  await recordOptOutEvents(rows, tx);
  return rows.length > 0;
}

/** The current opt-out of an address (null: not opted out), locked until the caller's transaction ends. */
export async function lockOptOut(target: OptOutTarget, tx: Tx) {
  const [row] = await tx
    .select()
    .from(optOuts)
    .where(
      and(
        eq(optOuts.businessId, target.businessId),
        eq(optOuts.channel, target.channel),
        eq(optOuts.address, suppressionAddress(target.channel, target.address)),
      ),
    )
    .for('update');
  return row ?? null;
}

/** Which of these addresses are opted out of the channel, in one indexed query. */
export async function suppressedAddresses(
  businessId: number,
  channel: OptOutChannel,
  addresses: readonly string[],
  tx: Tx,
): Promise<Set<string>> {
  const wanted = [...new Set(addresses.map((a) => suppressionAddress(channel, a)))].filter(Boolean);
  if (wanted.length === 0) return new Set();
  const rows = await tx
    .select({ address: optOuts.address })
    .from(optOuts)
    .where(and(eq(optOuts.businessId, businessId), eq(optOuts.channel, channel), equalsAny(optOuts.address, wanted, 'text')));
  return new Set(rows.map((r) => r.address));
}

export async function isSuppressed(target: OptOutTarget, tx: Tx = db): Promise<boolean> {
  return (await suppressedAddresses(target.businessId, target.channel, [target.address], tx)).size > 0;
}

/**
 * The set-based check, for a caller's own statement: true when `address` (a column or expression
 * of the outer query) is opted out of `channel` in `businessId`. One probe of the unique index
 * (business_id, channel, address) per row; a null address is never suppressed.
 */
export function suppressedSql(channel: OptOutChannel, businessId: SQL, address: SQL): SQL {
  // The stored form of suppressionAddress, in SQL.
  const stored = channel === 'email' ? sql`lower(trim(${address}))` : sql`trim(${address})`;
  return sql`exists (select 1 from opt_outs suppression where suppression.business_id = ${businessId}
    and suppression.channel = ${sql.raw(`'${channel}'`)} and suppression.address = ${stored})`;
}

/**
 * Opts out the recipients of messages a provider refused or bounced because of the recipient
 * (Twilio 21610), each on its message's channel and by its `to_address`, in one statement.
 */
export async function optOutRecipientsOf(messageIds: readonly number[], source: OptOutSource, tx: Tx): Promise<void> {
  if (messageIds.length === 0) return;
  const rows = await tx.execute<Recorded>(sql`
    with changed as (
      insert into opt_outs (business_id, channel, address, source, message_id)
      select distinct on (m.business_id, m.channel, address) m.business_id, m.channel, address, ${source}, m.id
      from messages m
      cross join lateral (select case when m.channel = 'email' then lower(trim(m.to_address)) else trim(m.to_address) end as address) a
      where m.id = any(${sql.param([...messageIds])}::bigint[]) and m.channel in ('sms', 'email') and coalesce(a.address, '') <> ''
      order by m.business_id, m.channel, address, m.id
      on conflict (business_id, channel, address) do nothing
      returning business_id, channel, address, source, message_id
    )
    insert into opt_out_events (business_id, channel, address, action, source, message_id)
    select business_id, channel, address, 'opt_out', source, message_id from changed
    ${RECORDED}`);
  await recordOptOutEvents(rows, tx);
}

/**
 * A client's `opted_out_sms` and `opted_out_email` (docs/api.md#opt-out), derived from opt_outs by
 * the client's phone number and email: every client row carrying an opted-out address shows it.
 * `cl`: the alias of `clients` in the caller's query.
 */
export function clientOptedOutColumns(cl: string): SQL {
  const col = (name: string) => sql.raw(`${cl}.${name}`);
  return sql`${suppressedSql('sms', col('business_id'), col('phone_number'))} as opted_out_sms,
    ${suppressedSql('email', col('business_id'), col('email'))} as opted_out_email`;
}

/**
 * Opts out the numbers and addresses of imported clients marked `opted_out_sms` / `opted_out_email`
 * (docs/api.md#onboarding), as stored after their upsert (a row that omits its number keeps the
 * stored one), in one statement. Source `import`; an existing opt-out keeps its first cause.
 */
export async function optOutImportedClients(
  businessId: number,
  rows: readonly { external_id: string; opted_out_sms?: boolean; opted_out_email?: boolean }[],
  tx: Tx,
): Promise<void> {
  const marked = rows
    .filter((r) => r.opted_out_sms || r.opted_out_email)
    .map((r) => ({ external_id: r.external_id, sms: Boolean(r.opted_out_sms), email: Boolean(r.opted_out_email) }));
  if (marked.length === 0) return;
  const recorded = await tx.execute<Recorded>(sql`
    with changed as (
      insert into opt_outs (business_id, channel, address, source)
      select distinct ${businessId}::int, x.channel, x.address, 'import'
      from jsonb_to_recordset(${JSON.stringify(marked)}::jsonb) as r(external_id text, sms boolean, email boolean)
      join clients c on c.business_id = ${businessId} and c.external_id = r.external_id
      cross join lateral (values ('sms', case when r.sms then trim(c.phone_number) end),
                                 ('email', case when r.email then lower(trim(c.email)) end)) as x(channel, address)
      where coalesce(x.address, '') <> ''
      on conflict (business_id, channel, address) do nothing
      returning business_id, channel, address, source
    )
    insert into opt_out_events (business_id, channel, address, action, source)
    select business_id, channel, address, 'opt_out', source from changed
    ${RECORDED}`);
  await recordOptOutEvents(recorded, tx);
}

/**
 * What each statement above returns of the history records it appended: with the clients of the
 * business at the address, for the `client.opted_out` / `client.opted_in` events.
 */
const RECORDED = sql`returning business_id, channel, address, action, source, note, staff_id,
  (select coalesce(array_agg(c.id order by c.id), '{}') from clients c
   where c.business_id = opt_out_events.business_id
     and case when opt_out_events.channel = 'sms' then c.phone_number = opt_out_events.address
              else lower(c.email) = opt_out_events.address end) as client_ids`;
type Recorded = {
  business_id: number;
  channel: OptOutChannel;
  address: string;
  action: 'opt_out' | 'opt_in';
  source: OptOutEventSource;
  note: string | null;
  staff_id: number | null;
  client_ids: number[];
};

/** Who changed an address's opt-out, from how the history records it. */
function actorOf(source: OptOutEventSource, staffId: number | null): EventActor {
  if (source === 'keyword') return { type: 'client' };
  if (source === 'provider_error') return { type: 'provider' };
  if (source === 'migrated') return { type: 'system' };
  if (source === 'import') return { type: 'api' };
  return staffOrApi(staffId);
}

/** The events of the opt-outs and opt-ins a statement recorded (docs/architecture.md#event-log). */
async function recordOptOutEvents(rows: readonly Recorded[], tx: Tx): Promise<void> {
  await recordEvents(
    rows.map((r): NewEvent => ({
      type: r.action === 'opt_out' ? 'client.opted_out' : 'client.opted_in',
      businessId: r.business_id,
      clientId: r.client_ids.length === 1 ? r.client_ids[0] : null,
      actor: actorOf(r.source, r.staff_id),
      data: {
        channel: r.channel,
        address: r.address,
        source: r.source,
        note: r.note,
        client_ids: r.client_ids.slice(0, 1000),
      },
    })),
    tx,
  );
}
