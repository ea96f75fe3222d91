import { sql } from 'drizzle-orm';
import { EVENT_TYPES, type EventType } from '@/db/schema';
import { textArray } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { notifyDeliveriesDue } from './endpoints';

/**
 * The outgoing webhooks' event handler (docs/architecture.md#event-log): for each event of the
 * log, in the log's order, one delivery per enabled endpoint of its business that takes its type
 * and existed when it happened. The body is built here, once, and kept: every attempt sends the
 * same bytes. Events of a conversation are numbered as they pass (`sequence` in data), so a receiver
 * can tell their order, and the sender keeps it per endpoint (./deliver.ts).
 */

export type WebhookBody = { type: string; timestamp: string; data: Record<string, unknown> };

/** What a receiver gets as `data`: the event's own data, whose business it is, who did it and, in a conversation, its place. */
function webhookBody(event: LoggedEvent, sequence: number | null): WebhookBody {
  return {
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    data: {
      ...event.data,
      business_id: event.businessId,
      actor: event.actor,
      ...(sequence !== null && { sequence }),
    },
  };
}

type Endpoint = { id: number; business_id: number; event_types: EventType[] | null; created_at: Date };

export async function createDeliveries(events: LoggedEvent[], tx: Tx = db): Promise<number> {
  const businessIds = [...new Set(events.map((e) => e.businessId))];
  const endpoints = await tx.execute<Endpoint>(sql`
    select id, business_id, event_types, created_at from webhook_endpoints
    where enabled and business_id = any(${textArray(businessIds)}::int[])`);
  if (endpoints.length === 0) return 0;
  const byBusiness = new Map<number, Endpoint[]>();
  for (const e of endpoints) byBusiness.set(e.business_id, [...(byBusiness.get(e.business_id) ?? []), e]);

  // Numbered: every event of a conversation whose business has an endpoint, whatever types each
  // endpoint takes (one numbering for all of them; an endpoint that filters sees gaps).
  const numbered = events.filter((e) => e.conversationId !== null && byBusiness.has(e.businessId));
  const sequences = await numberConversationEvents(numbered, tx);

  const rows: { endpoint: Endpoint; event: LoggedEvent; body: string }[] = [];
  for (const event of events) {
    const matching = (byBusiness.get(event.businessId) ?? []).filter(
      (e) => (e.event_types === null || e.event_types.includes(event.type)) && event.occurredAt >= new Date(e.created_at),
    );
    if (!matching.length) continue;
    const body = JSON.stringify(webhookBody(event, sequences.get(event.id) ?? null));
    for (const endpoint of matching) rows.push({ endpoint, event, body });
  }
  if (rows.length === 0) return 0;
  await tx.execute(sql`
    insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, conversation_id, sequence, payload)
    select v.business_id::int, v.endpoint_id::int, v.event_id::bigint, v.event_type, v.conversation_id::int, v.sequence::bigint, v.payload::jsonb
    from unnest(${textArray(rows.map((r) => r.event.businessId))}, ${textArray(rows.map((r) => r.endpoint.id))},
                ${textArray(rows.map((r) => r.event.id))}, ${textArray(rows.map((r) => r.event.type))},
                ${textArray(rows.map((r) => r.event.conversationId))}, ${textArray(rows.map((r) => sequences.get(r.event.id) ?? null))},
                ${textArray(rows.map((r) => r.body))})
         with ordinality as v(business_id, endpoint_id, event_id, event_type, conversation_id, sequence, payload, ord)
    order by v.ord`);
  await notifyDeliveriesDue(tx);
  return rows.length;
}

/**
 * The next numbers of each conversation's events, in the order given (the log's): one statement
 * for the batch. The handler runs one batch at a time (its cursor is locked), so nothing else
 * numbers at once.
 */
async function numberConversationEvents(events: LoggedEvent[], tx: Tx): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const e of events) counts.set(e.conversationId!, (counts.get(e.conversationId!) ?? 0) + 1);
  if (counts.size === 0) return new Map();
  const rows = await tx.execute<{ conversation_id: number; last_sequence: number }>(sql`
    insert into conversation_event_sequences (conversation_id, last_sequence)
    select c::int, n::bigint from unnest(${textArray([...counts.keys()])}, ${textArray([...counts.values()])}) as v(c, n)
    on conflict (conversation_id) do update set last_sequence = conversation_event_sequences.last_sequence + excluded.last_sequence
    returning conversation_id, last_sequence`);
  const next = new Map(rows.map((r) => [r.conversation_id, Number(r.last_sequence) - counts.get(r.conversation_id)! + 1]));
  const sequences = new Map<number, number>();
  for (const e of events) {
    const n = next.get(e.conversationId!)!;
    sequences.set(e.id, n);
    next.set(e.conversationId!, n + 1);
  }
  return sequences;
}

export const outgoingWebhooksHandler: EventHandler = {
  name: 'outgoing-webhooks',
  types: EVENT_TYPES,
  handle: async (events, tx) => {
    await createDeliveries(events, tx);
  },
};
