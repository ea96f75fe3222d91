import { sql } from 'drizzle-orm';
import type { Channel } from '@/db/schema';
import type { Tx } from '@/server/db/client';
import type { CountDelta } from './rollups';

/**
 * The messages the volume report counts (report_messages, db/schema/report-rollups.ts): every text,
 * email and call that is not a note, scheduled or canceled, at its sent_at, with its conversation's
 * location, its sender and its direction. Synced from the messages themselves, not from what an
 * event says: a message read again that has not changed changes nothing, so a replayed event or a
 * recount counts nothing twice. A sent scheduled message is counted when it is next seen (its first
 * status event: going `sending` logs none); a canceled one is taken off.
 */

/** A counted message; sent_at as PostgreSQL writes it in JSON (its microseconds kept). */
type Counted = {
  message_id: number;
  conversation_id: number;
  location_id: number | null;
  staff_id: number | null;
  channel: Channel;
  inbound: boolean;
  sent_at: string;
};

const same = (a: Counted, b: Counted) =>
  a.location_id === b.location_id &&
  a.staff_id === b.staff_id &&
  a.channel === b.channel &&
  a.inbound === b.inbound &&
  a.sent_at === b.sent_at;

const delta = (m: Counted, sign: number): CountDelta => ({
  kind: m.inbound ? 'in' : 'out',
  sign,
  at: m.sent_at,
  location_id: m.location_id,
  staff_id: m.staff_id,
  channel: m.channel,
});

/**
 * Syncs report_messages with the messages of whole conversations and with single messages; answers
 * the count deltas: −1 for a row taken off or changed, +1 for one written.
 */
export async function syncCountedMessages(
  businessId: number,
  target: { conversationIds: readonly number[]; messageIds: readonly number[] },
  tx: Tx,
): Promise<CountDelta[]> {
  const conversations = `{${[...new Set(target.conversationIds)].join(',')}}`;
  const ids = `{${[...new Set(target.messageIds)].join(',')}}`;
  if (conversations === '{}' && ids === '{}') return [];
  const columns = sql`m.id as message_id, m.conversation_id, c.location_id, m.staff_id, m.channel, m.direction = 'inbound' as inbound,
    to_json(m.sent_at) #>> '{}' as sent_at, m.message_type <> 'NOTE' and m.status not in ('scheduled', 'canceled') as countable`;
  const current = await tx.execute<Counted & { countable: boolean }>(sql`
    select ${columns} from messages m join conversations c on c.business_id = m.business_id and c.id = m.conversation_id
    where m.business_id = ${businessId} and m.conversation_id = any(${conversations}::int[])
    union
    select ${columns} from messages m join conversations c on c.business_id = m.business_id and c.id = m.conversation_id
    where m.business_id = ${businessId} and m.id = any(${ids}::bigint[])`);
  const ledgerColumns = sql`message_id, conversation_id, location_id, staff_id, channel, inbound, to_json(sent_at) #>> '{}' as sent_at`;
  const kept = await tx.execute<Counted>(sql`
    select ${ledgerColumns} from report_messages
    where business_id = ${businessId} and conversation_id = any(${conversations}::int[])
    union
    select ${ledgerColumns} from report_messages
    where business_id = ${businessId} and message_id = any(${ids}::bigint[])`);
  const before = new Map(kept.map((m) => [Number(m.message_id), { ...m, message_id: Number(m.message_id) }]));
  const removed: Counted[] = [];
  const written: Counted[] = [];
  for (const row of current) {
    const m = { ...row, message_id: Number(row.message_id) };
    const old = before.get(m.message_id);
    before.delete(m.message_id);
    if (old && m.countable && same(old, m)) continue;
    if (old) removed.push(old);
    if (m.countable) written.push(m);
  }
  // Counted, but the message is gone from what was read (it cannot be deleted: kept as a guard).
  removed.push(...before.values());
  if (removed.length)
    await tx.execute(sql`
      delete from report_messages where business_id = ${businessId}
        and message_id = any(${`{${removed.map((m) => m.message_id).join(',')}}`}::bigint[])`);
  if (written.length)
    await tx.execute(sql`
      insert into report_messages (message_id, business_id, conversation_id, location_id, staff_id, channel, inbound, sent_at)
      select message_id, ${businessId}, conversation_id, location_id, staff_id, channel, inbound, sent_at
      from jsonb_to_recordset(${JSON.stringify(written)}::jsonb) as x(message_id bigint, conversation_id int, location_id int,
        staff_id int, channel text, inbound boolean, sent_at timestamptz)
      order by message_id`);
  return [...removed.map((m) => delta(m, -1)), ...written.map((m) => delta(m, 1))];
}
