import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { equalsAny, textArray } from '@/db/sql-array';
import { recordEvents } from '@/server/services/events/record';
import type { ConversationStatus } from '@/db/schema';
import type { WaitingEffect } from './waiting';

/*
 * What arriving messages do to their conversation, in the writer's transaction: the conversation is
 * created on first contact (or found), and its latest message, unread count and status follow the
 * messages written to it.
 */

/** One conversation per business + client: created on first contact, found afterwards. */
export async function ensureConversations(businessId: number, clientIds: number[], tx: Tx): Promise<Map<number, number>> {
  return (await ensureConversationsWith(businessId, new Map(clientIds.map((id) => [id, null])), tx)).byClient;
}

/**
 * What a conversation created for new messages starts with: its latest message and how many of them
 * count as unread, as touchConversations would have set them. Created complete, the conversation
 * needs no touch afterwards: for a 1,000-SMS request to clients without conversations, that is
 * 1,000 row locks, index probes and non-HOT updates fewer (bench:send).
 */
export type NewConversationStart = {
  latest: { id: number; content: string | null; channel: string | null; sentAt: Date };
  unread: number;
  /** Since when its client waits for a reply (server/services/conversations/waiting.ts), or null. */
  waitingSince: Date | null;
};

/**
 * ensureConversations, with what each conversation it creates starts with (null: nothing yet).
 * `created`: the conversations made here, which already carry their start; a conversation that
 * existed (or a concurrent writer created meanwhile) does not, and is touched by the caller.
 */
export async function ensureConversationsWith(
  businessId: number,
  starts: Map<number, NewConversationStart | null>,
  tx: Tx,
): Promise<{ byClient: Map<number, number>; created: Set<number> }> {
  const clientIds = [...starts.keys()];
  const created = new Set<number>();
  if (clientIds.length === 0) return { byClient: new Map(), created };
  // Most clients of a bulk send already have their conversation: find those first (one index probe
  // each, the ids as one array parameter), and insert only the rest. An INSERT … ON CONFLICT for
  // every client cost a speculative insertion per row (~25 ms for 1,000).
  const found = async (ids: number[]) =>
    tx.execute<{ id: number; client_id: number }>(sql`
      select id, client_id from conversations
      where business_id = ${businessId} and ${equalsAny(sql`client_id`, ids, 'int')}`);
  const byClient = new Map((await found(clientIds)).map((r) => [r.client_id, r.id]));
  const missing = clientIds.filter((id) => !byClient.has(id));
  if (missing.length === 0) return { byClient, created };
  // Each column a text array cast in SQL (textArray); greatest() skips a null sent_at, so a bare
  // conversation starts now.
  const column = (pick: (start: NewConversationStart | null) => unknown) =>
    textArray(missing.map((id) => pick(starts.get(id) ?? null)));
  // Each new conversation's `conversation.created` (docs/architecture.md#event-log) is written by
  // the same statement, from the rows it inserted: no event objects, schema checks or arrays to
  // build and bind per conversation (messages/insert.ts explains why; events.test.ts checks the
  // shape). The product opens a conversation for whatever enters it first: the system is its actor.
  const inserted = await tx.execute<{ id: number; client_id: number }>(sql`
    with added as (
      insert into conversations (business_id, client_id, location_id, last_message_id, last_message_content, last_channel, last_activity_at, unread_count, waiting_since)
      select ${businessId}, c.id, c.location_id, v.message_id::bigint, v.content, v.channel,
        greatest(now(), v.sent_at::timestamptz), coalesce(v.unread::int, 0), v.waiting_since::timestamptz
      from unnest(${sql.param(missing)}::int[], ${column((s) => s?.latest.id)}, ${column((s) => s?.latest.content)},
        ${column((s) => s?.latest.channel)}, ${column((s) => s?.latest.sentAt.toISOString())}, ${column((s) => s?.unread)},
        ${column((s) => s?.waitingSince?.toISOString())})
        as v(client_id, message_id, content, channel, sent_at, unread, waiting_since)
      join clients c on c.business_id = ${businessId} and c.id = v.client_id
      on conflict (business_id, client_id) do nothing
      returning id, business_id, client_id
    ), e as (
      insert into events (business_id, type, conversation_id, client_id, actor_type, data)
      select a.business_id, 'conversation.created', a.id, a.client_id, 'system',
        jsonb_build_object('conversation_id', a.id, 'client_id', a.client_id)
      from added a order by a.id
    )
    select id, client_id from added`);
  for (const r of inserted) {
    byClient.set(r.client_id, r.id);
    created.add(r.id);
  }
  // A concurrent writer created some meanwhile (its rows conflicted, so none came back): read them,
  // in a statement of its own that sees what that writer committed.
  const raced = missing.filter((id) => !byClient.has(id));
  if (raced.length) for (const r of await found(raced)) byClient.set(r.client_id, r.id);
  return { byClient, created };
}

/** What touchConversations reads of each new message (insertMessages returns it for each). */
export type NewMessage = { conversationId: number; direction: string; unread: boolean; waiting?: WaitingEffect };

/**
 * Of a conversation's new messages: how many count as unread, how many are inbound, and what the
 * last of them with a waiting effect did (1 the client wrote, -1 a reply, 0 neither).
 */
type NewMessageCounts = { unread: number; inbound: number; waiting: number };

/**
 * After new messages were inserted (what insertMessages returned for them): recomputes their
 * conversations' last-message fields from the newest message and adds the new unread inbound ones,
 * in one statement; inbound messages reopen a resolved or snoozed conversation
 * (docs/api.md#conversation-statuses). Counting only the messages given, with a relative update,
 * keeps counts exact under concurrent writers. What each message counts comes with it, so the
 * messages are not read again (for a 1,000-SMS request: two scans of 1,000 ids fewer).
 */
export async function touchConversations(newMessages: readonly NewMessage[], tx: Tx): Promise<void> {
  if (newMessages.length === 0) return;
  const perConversation = new Map<number, NewMessageCounts>();
  for (const m of newMessages) {
    const counts = perConversation.get(m.conversationId) ?? { unread: 0, inbound: 0, waiting: 0 };
    if (m.unread) counts.unread++;
    if (m.direction === 'inbound') counts.inbound++;
    if (m.waiting) counts.waiting = m.waiting === 'client' ? 1 : -1;
    perConversation.set(m.conversationId, counts);
  }
  // Lock the conversations first (in id order), so the statement below reads the newest message
  // after any concurrent writer holding them has committed. NO KEY UPDATE, the lock the UPDATE
  // itself takes: it does not conflict with the KEY SHARE locks our own message inserts' foreign
  // keys hold, so two writers cannot deadlock upgrading them.
  const locked = await tx.execute<{ id: number; business_id: number; status: ConversationStatus }>(sql`
    select c.id, c.business_id, c.status from conversations c where ${equalsAny(sql`c.id`, [...perConversation.keys()], 'int')}
    order by c.id for no key update`);
  await tx.execute(touchStatement(perConversation));
  // The client wrote into a resolved or snoozed conversation: the statement above reopened it.
  const reopened = locked.filter(
    (c) => (perConversation.get(c.id)?.inbound ?? 0) > 0 && (c.status === 'resolved' || c.status === 'snoozed'),
  );
  await recordEvents(
    reopened.map((c) => ({
      type: 'conversation.status_changed' as const,
      businessId: c.business_id,
      conversationId: c.id,
      actor: { type: 'client' as const },
      data: { conversation_id: c.id, status: 'open' as const, previous_status: c.status },
    })),
    tx,
  );
}

/**
 * touchConversations' UPDATE: per conversation, its latest message and the counts of its new ones.
 * One row per conversation from the lateral probe on, not a join of two lists on conversation_id:
 * planned for an array of unknown length (a generic plan, server/db/client.ts), such a join became a
 * nested loop over 1,000 × 1,000 rows, ~100 ms for a bulk request. Exported for its plan's test.
 */
export function touchStatement(perConversation: Map<number, NewMessageCounts>): SQL {
  const counts = [...perConversation.values()];
  const column = (pick: (c: NewMessageCounts) => number) => sql.param(counts.map(pick));
  return sql`
    with latest as (
      -- One index probe per conversation (messages_conversation_sent_idx), however long its history.
      select f.conversation_id, f.unread, f.inbound, f.waiting, l.id, l.content, l.channel, l.sent_at
      from unnest(${sql.param([...perConversation.keys()])}::int[], ${column((c) => c.unread)}::int[], ${column((c) => c.inbound)}::int[],
        ${column((c) => c.waiting)}::int[])
        as f(conversation_id, unread, inbound, waiting)
      cross join lateral (
        select m.id, m.content, m.channel, m.sent_at from messages m
        where m.conversation_id = f.conversation_id
        order by m.sent_at desc, m.id desc limit 1
      ) l
    )
    update conversations c set
      last_message_id = latest.id,
      last_message_content = latest.content,
      last_channel = coalesce(latest.channel, c.last_channel),
      last_activity_at = greatest(c.last_activity_at, latest.sent_at),
      unread_count = c.unread_count + latest.unread,
      -- Waiting for a reply (waiting.ts): since the client's first text after a reply, until the next reply.
      waiting_since = case latest.waiting when 1 then coalesce(c.waiting_since, latest.sent_at)
                                          when -1 then null else c.waiting_since end,
      status = case when latest.inbound > 0 and c.status in ('resolved', 'snoozed') then 'open' else c.status end,
      snoozed_until = case when latest.inbound > 0 and c.status = 'snoozed' then null else c.snoozed_until end,
      -- A reopened conversation is no longer resolved by anyone (docs/api.md#conversation-statuses: resolved records resolved_by).
      resolved_by_staff_id = case when latest.inbound > 0 and c.status = 'resolved' then null else c.resolved_by_staff_id end
    from latest
    where c.id = latest.conversation_id`;
}

/**
 * The conversations' latest message again, after one of their messages changed place or stopped
 * counting without a new one arriving (docs/api.md#send-later): a scheduled message that went
 * (its sent_at became the moment it went, so it moves the conversation up the list) or was
 * canceled (it never reached the client: the list previews what did). Canceled messages are passed
 * over; activity only moves forward. The caller locks the conversations before their messages
 * where it holds both, as touchConversations' callers do.
 */
export async function refreshLatestMessages(conversationIds: number[], tx: Tx): Promise<void> {
  if (conversationIds.length === 0) return;
  await tx.execute(sql`
    update conversations c set
      last_message_id = l.id,
      last_message_content = l.content,
      last_channel = coalesce(l.channel, c.last_channel),
      last_activity_at = greatest(c.last_activity_at, l.sent_at)
    from unnest(${sql.param([...new Set(conversationIds)])}::int[]) as t(id)
    cross join lateral (
      select m.id, m.content, m.channel, m.sent_at from messages m
      where m.conversation_id = t.id and m.status <> 'canceled'
      order by m.sent_at desc, m.id desc limit 1
    ) l
    where c.id = t.id`);
}
