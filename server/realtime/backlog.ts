import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { STREAMED_TYPES, type EventRow } from './frames';

/**
 * What a live stream that reconnects missed, read from the event log (docs/api.md#live-events).
 * Positions are the log's reading order, (tx_id, id) (server/services/events/dispatch.ts): total,
 * stable, and a reader that keeps one never skips a later commit.
 */
export type Position = { tx: bigint; id: number };

/** a after b in the log's order. */
export const isAfter = (a: Position, b: Position): boolean => a.tx > b.tx || (a.tx === b.tx && a.id > b.id);

/** An event as the stream reads it: its id, its position (tx_id, an xid8, reaches us as text) and its frame's columns. */
export type StreamedRow = EventRow & { id: number; tx_id: string };

export const positionOf = (row: { id: number; tx_id: string }): Position => ({ tx: BigInt(row.tx_id), id: row.id });

/**
 * The most a resume replays: past it the client is told to refetch, which costs the same whatever
 * it missed. A tab away for longer than RESUME_MAX_AGE_MS (a laptop asleep) reloads what it shows
 * rather than replaying a day of its business's events.
 */
export const RESUME_MAX_EVENTS = 1_000;
export const RESUME_MAX_AGE_MS = 60 * 60_000;

/**
 * The columns of a streamed event (the tail's select list too). `tx_id` keeps its type, so that an
 * ORDER BY tx_id sorts by it and not by a text alias.
 */
export const STREAMED_COLUMNS = sql`id, tx_id, business_id, type, conversation_id, message_id, client_id,
  case when type in ('client.opted_out', 'client.opted_in') then data -> 'client_ids' end as client_ids`;

export const streamedTypes = () => sql`type = any(${sql.param(STREAMED_TYPES)}::text[])`;

export type Backlog =
  { ok: true; rows: StreamedRow[]; from: Position } | { ok: false; reason: 'unknown' | 'too_old' | 'too_many'; lastId: number };

/**
 * The streamed events of `businessId` after the client's last event and up to `upTo` (the tail's
 * cursor when the stream joined it: everything up to there is committed, and the tail streams what
 * comes after). `lastEventId` null: a new stream, which replays from `joined` (where the tail was
 * when it subscribed) so that nothing committed while it joined is lost. Refused (the client
 * refetches) when the id is not an event of this business in the log (never was, another
 * business's, or pruned), older than RESUME_MAX_AGE_MS, or followed by more than RESUME_MAX_EVENTS;
 * `lastId` is then the business's latest event up to `upTo`, to resume from after the refetch
 * (0: none).
 */
export async function readBacklog(
  businessId: number,
  lastEventId: number | null,
  joined: Position,
  upTo: Position,
  tx: Tx = db,
): Promise<Backlog> {
  let from = joined;
  if (lastEventId !== null) {
    const [last] = await tx.execute<{ tx_id: string; business_id: number; old: boolean }>(sql`
      select tx_id::text as tx_id, business_id, occurred_at < now() - make_interval(secs => ${RESUME_MAX_AGE_MS / 1000}) as old
      from events where id = ${lastEventId}`);
    if (!last || last.business_id !== businessId) return refuse(businessId, 'unknown', upTo, tx);
    if (last.old) return refuse(businessId, 'too_old', upTo, tx);
    from = positionOf({ id: lastEventId, tx_id: last.tx_id });
  }
  if (!isAfter(upTo, from)) return { ok: true, rows: [], from };
  const rows = await tx.execute<StreamedRow>(sql`
    select ${STREAMED_COLUMNS} from events
    where business_id = ${businessId} and ${streamedTypes()}
      and (tx_id, id) > (${String(from.tx)}::xid8, ${from.id}::bigint)
      and (tx_id, id) <= (${String(upTo.tx)}::xid8, ${upTo.id}::bigint)
    order by tx_id, id
    limit ${RESUME_MAX_EVENTS + 1}`);
  if (rows.length > RESUME_MAX_EVENTS) return refuse(businessId, 'too_many', upTo, tx);
  return { ok: true, rows: [...rows], from };
}

async function refuse(businessId: number, reason: 'unknown' | 'too_old' | 'too_many', upTo: Position, tx: Tx): Promise<Backlog> {
  const [latest] = await tx.execute<{ id: number }>(sql`
    select id from events
    where business_id = ${businessId} and ${streamedTypes()}
      and (tx_id, id) <= (${String(upTo.tx)}::xid8, ${upTo.id}::bigint)
    order by tx_id desc, id desc limit 1`);
  return { ok: false, reason, lastId: latest?.id ?? 0 };
}
