import { sql } from 'drizzle-orm';
import { EVENT_TYPES } from '@/db/schema';
import { textArray } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { WEBHOOK_DELIVERIES_CHANNEL } from './endpoints';

/**
 * The outgoing webhooks' event handler (docs/architecture.md#event-log): for each event of the
 * log, in the log's order, one delivery per enabled endpoint of its business that takes its type
 * and existed when it happened. The body is built here, once, and kept: every attempt sends the
 * same bytes. Events of a conversation are numbered as they pass (`sequence` in data), so a receiver
 * can tell their order, and the sender keeps it per endpoint (./deliver.ts).
 */

export type WebhookBody = { type: string; timestamp: string; data: Record<string, unknown> };

/**
 * What a receiver gets as `data`: the event's own data, whose business it is, who did it and, in a
 * conversation, its place (`sequence`, which createDeliveries adds).
 */
function webhookBody(event: LoggedEvent): WebhookBody {
  return {
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    data: {
      ...event.data,
      business_id: event.businessId,
      actor: event.actor,
    },
  };
}

/**
 * One statement for the batch (the dispatcher's round is on every delivery's path, and on a busy
 * machine each round trip costs milliseconds): the enabled endpoints of the batch's businesses;
 * each conversation's next numbers, in the log's order (every event of a conversation whose
 * business has an endpoint, whatever types each endpoint takes: one numbering for all of them, so
 * an endpoint that filters sees gaps); one delivery per event and endpoint that takes its type and
 * existed when it happened, its body with the number added; and the sender's wake-up. The handler
 * runs one batch at a time (one dispatcher holds its lock), so nothing else numbers at once.
 */
export async function createDeliveries(events: LoggedEvent[], tx: Tx = db): Promise<number> {
  if (events.length === 0) return 0;
  const [result] = await tx.execute<{ made: number }>(sql`
    with event as (
      select * from unnest(${textArray(events.map((e) => e.id))}::bigint[], ${textArray(events.map((e) => e.businessId))}::int[],
                           ${textArray(events.map((e) => e.type))}, ${textArray(events.map((e) => e.conversationId))}::int[],
                           ${textArray(events.map((e) => e.occurredAt.toISOString()))}::timestamptz[],
                           ${textArray(events.map((e) => JSON.stringify(webhookBody(e))))})
             with ordinality as v(id, business_id, type, conversation_id, occurred_at, body, ord)
    ),
    endpoint as (
      select id, business_id, event_types, created_at from webhook_endpoints
      where enabled and business_id in (select business_id from event)
    ),
    numbered as (
      select id, conversation_id, count(*) over (partition by conversation_id) as n,
             row_number() over (partition by conversation_id order by ord) as k
      from event where conversation_id is not null and business_id in (select business_id from endpoint)
    ),
    counted as (
      insert into conversation_event_sequences (conversation_id, last_sequence)
      select conversation_id, count(*) from numbered group by conversation_id
      on conflict (conversation_id) do update set last_sequence = conversation_event_sequences.last_sequence + excluded.last_sequence
      returning conversation_id, last_sequence
    ),
    sequenced as (
      select n.id, c.last_sequence - n.n + n.k as sequence from numbered n join counted c using (conversation_id)
    ),
    made as (
      insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, conversation_id, sequence, payload)
      select v.business_id, p.id, v.id, v.type, v.conversation_id, s.sequence,
             -- Parsed only where it is delivered (most businesses have no endpoint).
             case when s.sequence is null then v.body::jsonb else jsonb_set(v.body::jsonb, '{data,sequence}', to_jsonb(s.sequence)) end
      from event v
      join endpoint p on p.business_id = v.business_id and (p.event_types is null or v.type = any(p.event_types))
        -- occurred_at comes in milliseconds (a JavaScript Date): compared at that precision.
        and v.occurred_at >= date_trunc('milliseconds', p.created_at)
      left join sequenced s on s.id = v.id
      -- In the log's order: within an endpoint and a conversation, ids follow the events.
      order by v.ord, p.id
      returning 1
    )
    select (select count(*) from made)::int as made,
           (select count(*) from (select pg_notify(${WEBHOOK_DELIVERIES_CHANNEL}, '') from made limit 1) n) as notified`);
  return result!.made;
}

export const outgoingWebhooksHandler: EventHandler = {
  name: 'outgoing-webhooks',
  types: EVENT_TYPES,
  handle: async (events, tx) => {
    await createDeliveries(events, tx);
  },
};
