import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { movedWaiting } from '@/server/services/conversations/waiting';
import { businessOpeningHours } from '@/server/services/opening-hours';
import { openingClock } from '@/server/shared/opening-hours';
import { cyclesOf, missedCallsOf, type BusinessSeconds, type CycleFigure, type HistoryItem, type OpenCycle } from './figures';
import { syncCountedMessages } from './ledger';
import { countRollupsAgain } from './rebuild';
import {
  applyRollupDeltas,
  countDayStats,
  daysOf,
  netted,
  openRollups,
  setRollupState,
  type CountDelta,
  type ValueDelta,
} from './rollups';

/**
 * Recounts reports' durable rows (db/schema/reports.ts) of some conversations of one business from
 * their messages and status history (conversation_activities), from the earliest moment something
 * changed, and keeps the rollups (./rollups.ts) and the counted messages (./ledger.ts) with them:
 * the event log's `reports` handler calls it for the conversations of each batch, and the recount of
 * old history (`recountBusinessReports`) for every conversation from the beginning. One code path,
 * so the handler and the backfill cannot disagree.
 *
 * Only what the change can affect is read again. A change after the open cycle's last message (a
 * new message, a resolution: nearly every event) goes on from there: the open cycle's row is updated
 * and only what is new is read and written — a conversation's thousandth message costs what its
 * first did. Any other change recounts from the last resolution before it (a cycle closed stays
 * closed: what comes after a resolution starts from nothing open), or from the conversation's first
 * cycle when none was resolved before it: what is after is deleted and counted again. Missed calls
 * likewise from the earliest change or the earliest call not answered before it.
 */

/** A conversation something happened to, and when (`at`: an ISO time, or '-infinity' to recount it all). */
export type Touch = { conversationId: number; messageId: number | null; at: string };

type Scope = {
  conversation_id: number;
  location_id: number | null;
  t: string;
  k: string | null;
  t_calls: string;
  /** Cycles are counted from here: the open cycle's last message (resumed), else the last resolution before the change, else the first cycle's start. */
  cycles_from: string;
  since: string;
  open: {
    id: number;
    location_id: number | null;
    channel: 'sms' | 'email';
    start_message_id: number;
    started_at: string;
    client_messages: number;
    replies: number;
    answered: boolean;
    last_message_at: string;
    last_message_id: number;
    waiting_message_id: number | null;
    waiting_since: string | null;
    waiting_channel: 'sms' | 'email' | null;
  } | null;
};

type Row = {
  conversation_id: number;
  kind: HistoryItem['kind'];
  id: string;
  at: Date;
  channel: 'sms' | 'email' | 'voice' | null;
  staff_id: number | null;
  call_outcome: 'missed' | 'voicemail' | null;
};

/** A cycle or reply row removed by a recount, as its deltas need it. */
type RemovedCycle = {
  conversation_id: number;
  location_id: number | null;
  channel: 'sms' | 'email';
  started_at: Date | string;
  first_reply_staff_id: number | null;
  first_response_seconds: number | null;
  first_response_business_seconds: number | null;
  resolved_at: Date | string | null;
  resolved_by_staff_id: number | null;
  resolution_seconds: number | null;
  resolution_business_seconds: number | null;
};
type RemovedReply = {
  conversation_id: number;
  location_id: number | null;
  channel: 'sms' | 'email';
  waiting_since: Date | string;
  staff_id: number | null;
  seconds: number;
  business_seconds: number;
};

/** What one recount changed: the rollups' deltas. */
type Deltas = { values: ValueDelta[]; counts: CountDelta[] };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const ms = (at: string) => new Date(at).getTime();
/** A time as JSON writes it (ISO 8601, or ±infinity), which both PostgreSQL and Date read back. */
const json = (at: SQL) => sql`to_json(${at}) #>> '{}'`;
/** A stored time as the deltas of rows written carry it (JavaScript's ISO 8601), so equal ones net out. */
const normal = (at: Date | string | null) => (at === null ? null : new Date(at).toISOString());

/** The deltas of a cycle (its start, resolution, first response and resolution times), signed. */
function cycleDeltas(out: Deltas, c: RemovedCycle, sign: number, only?: { firstResponse: boolean; resolution: boolean }) {
  const d = out;
  const where = { location_id: c.location_id, channel: c.channel };
  const startedAt = normal(c.started_at)!;
  if (!only) d.counts.push({ kind: 'opened', sign, at: startedAt, staff_id: null, ...where });
  if (c.resolved_at !== null && (!only || only.resolution)) {
    d.counts.push({ kind: 'resolved', sign, at: normal(c.resolved_at)!, staff_id: c.resolved_by_staff_id, ...where });
  }
  if (c.first_response_seconds !== null && (!only || only.firstResponse)) {
    d.values.push({
      figure: 'first_response',
      sign,
      at: startedAt,
      staff_id: c.first_reply_staff_id,
      seconds: c.first_response_seconds,
      business_seconds: c.first_response_business_seconds!,
      ...where,
    });
  }
  if (c.resolution_seconds !== null && (!only || only.resolution)) {
    d.values.push({
      figure: 'resolution',
      sign,
      at: startedAt,
      staff_id: c.resolved_by_staff_id,
      seconds: c.resolution_seconds,
      business_seconds: c.resolution_business_seconds!,
      ...where,
    });
  }
}

function replyDeltas(out: Deltas, r: RemovedReply, sign: number) {
  out.values.push({
    figure: 'reply',
    sign,
    at: normal(r.waiting_since)!,
    location_id: r.location_id,
    channel: r.channel,
    staff_id: r.staff_id,
    seconds: r.seconds,
    business_seconds: r.business_seconds,
  });
}

/** A cycle counted now, as its row is written. */
function cycleRow(c: CycleFigure, base: { conversation_id: number; location_id: number | null }) {
  return {
    ...base,
    channel: c.channel,
    start_message_id: c.startMessageId,
    started_at: iso(c.startedAt)!,
    client_messages: c.clientMessages,
    replies: c.replyCount,
    first_reply_message_id: c.firstReply?.replyMessageId ?? null,
    first_reply_at: iso(c.firstReply?.repliedAt ?? null),
    first_reply_staff_id: c.firstReply?.staffId ?? null,
    first_response_seconds: c.firstReply?.seconds ?? null,
    first_response_business_seconds: c.firstReply?.businessSeconds ?? null,
    resolved_at: iso(c.resolvedAt),
    resolved_by_staff_id: c.resolvedByStaffId,
    resolution_seconds: c.resolutionSeconds,
    resolution_business_seconds: c.resolutionBusinessSeconds,
    last_message_at: iso(c.lastMessage.at)!,
    last_message_id: c.lastMessage.id,
    waiting_message_id: c.waiting?.messageId ?? null,
    waiting_since: iso(c.waiting?.at ?? null),
    waiting_channel: c.waiting?.channel ?? null,
    reply_rows: c.replies.map((r) => ({
      channel: r.channel,
      waiting_message_id: r.waitingMessageId,
      waiting_since: iso(r.waitingSince)!,
      reply_message_id: r.replyMessageId,
      replied_at: iso(r.repliedAt)!,
      staff_id: r.staffId,
      seconds: r.seconds,
      business_seconds: r.businessSeconds,
    })),
  };
}

/** The history read for a conversation, as the definitions take it. */
function historyItem(r: Row): HistoryItem {
  const at = new Date(r.at).getTime();
  const id = Number(r.id);
  switch (r.kind) {
    case 'client':
      return { kind: 'client', at, messageId: id, channel: r.channel as 'sms' | 'email' };
    case 'reply':
      return { kind: 'reply', at, messageId: id, channel: r.channel as 'sms' | 'email', staffId: r.staff_id };
    case 'resolved':
      return { kind: 'resolved', at, staffId: r.staff_id, order: id };
    case 'missed_call':
      return { kind: 'missed_call', at, messageId: id, outcome: r.call_outcome! };
    case 'call_out':
      return { kind: 'call_out', at, messageId: id, staffId: r.staff_id };
  }
}

/** Is the item after the open cycle's last message (in the order the definitions read: messages before a resolution of the same millisecond, then by id)? */
const after = (i: HistoryItem, last: { at: number; id: number }) =>
  i.at > last.at || (i.at === last.at && (i.kind === 'resolved' || ('messageId' in i && i.messageId > last.id)));

/**
 * Recounts the conversations touched (their cycles, reply times and missed calls) and the messages
 * touched (the counted messages: a message's own, or a whole conversation's when touched from
 * '-infinity'), and keeps the rollups with them. Takes the business's reports lock.
 */
export async function recountReports(
  businessId: number,
  touches: readonly Touch[],
  messageIds: readonly number[],
  tx: Tx,
): Promise<void> {
  if (touches.length === 0 && messageIds.length === 0) return;
  const rollups = await openRollups(businessId, tx);
  const values: ValueDelta[] = [];
  const counts: CountDelta[] = [];
  if (touches.length) await recountCycles(businessId, touches, { values, counts }, tx);
  const whole = [...new Set(touches.filter((t) => t.at === '-infinity').map((t) => t.conversationId))];
  const single = [...messageIds, ...touches.flatMap((t) => (t.messageId === null ? [] : [t.messageId]))];
  counts.push(...(await syncCountedMessages(businessId, { conversationIds: whole, messageIds: single }, tx)));
  await applyRollupDeltas(businessId, rollups, values, counts, tx);
  // The days whose figures changed are counted again whole, once the backfill has started on them
  // (before it has, it counts them all).
  if (netted(values).length && (rollups.ready || rollups.builtUntil !== null)) {
    await countDayStats(businessId, rollups.zones, daysOf(rollups.zones, values), tx);
  }
}

/** The recount of some conversations (the handler's, tests'): their cycles, calls and messages. */
export async function recountConversations(businessId: number, touches: readonly Touch[], tx: Tx = db): Promise<void> {
  await recountReports(businessId, touches, [], tx);
}

async function recountCycles(businessId: number, touches: readonly Touch[], deltas: Deltas, tx: Tx): Promise<void> {
  // The earliest change per conversation (a message's own time: a recorded one may be in the past),
  // the last resolution before it (k), where missed calls must be counted from (t_calls), and the
  // open cycle when the change comes after its last message (counting goes on from there).
  const scopes = await tx.execute<Scope>(sql`
    with touch as (
      select x.conversation_id, x.message_id, x.at from jsonb_to_recordset(${JSON.stringify(touches.map((t) => ({ conversation_id: t.conversationId, message_id: t.messageId, at: t.at })))}::jsonb)
        as x(conversation_id int, message_id bigint, at timestamptz)
    ), t as (
      select touch.conversation_id, min(coalesce(m.sent_at, touch.at)) as t
      from touch left join messages m on m.business_id = ${businessId} and m.id = touch.message_id
      group by touch.conversation_id
    ), s as (
      select t.conversation_id, c.location_id, t.t,
        (select max(rc.resolved_at) from report_cycles rc
          where rc.business_id = ${businessId} and rc.conversation_id = t.conversation_id and rc.resolved_at < t.t) as k,
        (select min(rc.started_at) from report_cycles rc
          where rc.business_id = ${businessId} and rc.conversation_id = t.conversation_id) as first_start,
        -- To the millisecond, as the figures are counted (below) and the rows keep their times: a
        -- bound in microseconds would keep a call of its millisecond that the count below adds again.
        date_trunc('milliseconds', least(t.t, (select min(mc.called_at) from report_missed_calls mc
          where mc.business_id = ${businessId} and mc.conversation_id = t.conversation_id
            and (mc.answered_at is null or mc.answered_at >= t.t)))) as t_calls,
        (select json_build_object('id', rc.id, 'location_id', rc.location_id, 'channel', rc.channel, 'start_message_id', rc.start_message_id,
            'started_at', rc.started_at, 'client_messages', rc.client_messages, 'replies', rc.replies,
            'answered', rc.first_reply_at is not null, 'last_message_at', rc.last_message_at,
            'last_message_id', rc.last_message_id, 'waiting_message_id', rc.waiting_message_id,
            'waiting_since', rc.waiting_since, 'waiting_channel', rc.waiting_channel)
          from report_cycles rc
          where rc.business_id = ${businessId} and rc.conversation_id = t.conversation_id and rc.resolved_at is null
            and rc.last_message_at < t.t
          order by rc.started_at desc limit 1) as open
      from t join conversations c on c.business_id = ${businessId} and c.id = t.conversation_id
    ), f as (
      select s.*, coalesce((s.open->>'last_message_at')::timestamptz, s.k, least(s.t, s.first_start)) as cycles_from from s
    )
    select conversation_id, location_id, ${json(sql`t`)} as t, ${json(sql`k`)} as k, ${json(sql`t_calls`)} as t_calls,
      ${json(sql`cycles_from`)} as cycles_from, ${json(sql`least(cycles_from, t_calls)`)} as since, open
    from f`);
  if (scopes.length === 0) return;

  const rows = await tx.execute<Row>(sql`
    with s as (
      select * from jsonb_to_recordset(${JSON.stringify(scopes)}::jsonb) as s(conversation_id int, since timestamptz, cycles_from timestamptz)
    )
    select s.conversation_id, m.kind, m.id::text, m.sent_at as at, m.channel, m.staff_id, m.call_outcome
    from s cross join lateral (
      select m.id, m.sent_at, m.channel, m.staff_id, m.call_outcome,
        case
          when m.message_type in ('TEXT', 'EMAIL') and m.direction = 'inbound' then 'client'
          when m.direction = 'outbound' and ${movedWaiting(sql.raw('m'))} then 'reply'
          when m.message_type = 'CALL' and m.direction = 'inbound' and m.call_outcome is not null then 'missed_call'
          when m.message_type = 'CALL' and m.direction = 'outbound' and m.sender_type <> 'system' then 'call_out'
        end as kind
      from messages m
      where m.conversation_id = s.conversation_id and m.business_id = ${businessId} and m.sent_at >= s.since
    ) m
    where m.kind is not null
    union all
    select s.conversation_id, 'resolved', a.id::text, a.occurred_at, null, a.actor_staff_id, null
    from s join conversation_activities a
      on a.business_id = ${businessId} and a.conversation_id = s.conversation_id
     and a.occurred_at >= s.cycles_from
     and a.type = 'conversation.status_changed' and a.data->>'status' = 'resolved'`);

  const hours = await businessOpeningHours(businessId, tx);
  const clocks = new Map<number | null, BusinessSeconds>();
  const clockOf = (locationId: number | null): BusinessSeconds => {
    let found = clocks.get(locationId);
    if (!found) {
      const clock = openingClock(hours.forLocation(locationId));
      found = (a, b) => clock.businessSeconds(a, b);
      clocks.set(locationId, found);
    }
    return found;
  };

  const byConversation = new Map<number, HistoryItem[]>();
  for (const r of rows) {
    const list = byConversation.get(r.conversation_id) ?? [];
    list.push(historyItem(r));
    byConversation.set(r.conversation_id, list);
  }

  const cycles: ReturnType<typeof cycleRow>[] = [];
  const resumed: (Omit<ReturnType<typeof cycleRow>, 'reply_rows'> & { id: number })[] = [];
  const resumedReplies: (ReturnType<typeof cycleRow>['reply_rows'][number] & { cycle_id: number })[] = [];
  const calls: Record<string, unknown>[] = [];
  for (const s of scopes) {
    const items = byConversation.get(s.conversation_id) ?? [];
    const business = clockOf(s.location_id);
    const base = { conversation_id: s.conversation_id, location_id: s.location_id };
    const open = s.open;
    const last = open ? { at: ms(open.last_message_at), id: Number(open.last_message_id) } : null;
    const k = s.k ? ms(s.k) : -Infinity;
    const state: OpenCycle | undefined =
      open && last
        ? {
            channel: open.channel,
            startMessageId: Number(open.start_message_id),
            startedAt: ms(open.started_at),
            clientMessages: open.client_messages,
            replyCount: open.replies,
            answered: open.answered,
            lastMessage: last,
            waiting:
              open.waiting_message_id === null
                ? null
                : { messageId: Number(open.waiting_message_id), at: ms(open.waiting_since!), channel: open.waiting_channel! },
          }
        : undefined;
    const counted = cyclesOf(
      items.filter((i) => (last ? after(i, last) : i.at > k)),
      business,
      state,
    );
    for (const [index, c] of counted.entries()) {
      const resumes = open !== null && index === 0;
      // The open cycle keeps the location it was counted at; a new one takes the conversation's.
      const row = cycleRow(c, resumes ? { ...base, location_id: open.location_id } : base);
      const where = {
        conversation_id: s.conversation_id,
        location_id: row.location_id,
        channel: c.channel,
        started_at: row.started_at,
      };
      const figures = {
        ...where,
        first_reply_staff_id: row.first_reply_staff_id,
        first_response_seconds: row.first_response_seconds,
        first_response_business_seconds: row.first_response_business_seconds,
        resolved_at: row.resolved_at,
        resolved_by_staff_id: row.resolved_by_staff_id,
        resolution_seconds: row.resolution_seconds,
        resolution_business_seconds: row.resolution_business_seconds,
      };
      if (resumes) {
        // The open cycle gone on: its row is updated, its new reply times added.
        const { reply_rows, ...fields } = row;
        resumed.push({ ...fields, id: Number(open.id) });
        resumedReplies.push(...reply_rows.map((r) => ({ ...r, cycle_id: Number(open.id) })));
        cycleDeltas(deltas, figures, 1, { firstResponse: !open.answered && c.answered, resolution: c.resolvedAt !== null });
      } else {
        cycles.push(row);
        cycleDeltas(deltas, figures, 1);
      }
      for (const r of row.reply_rows) replyDeltas(deltas, { ...where, ...r }, 1);
    }
    const tCalls = s.t_calls === '-infinity' ? -Infinity : ms(s.t_calls);
    for (const c of missedCallsOf(
      items.filter((i) => i.kind !== 'resolved' && i.kind !== 'client' && i.at >= tCalls),
      business,
    )) {
      calls.push({
        ...base,
        call_message_id: c.callMessageId,
        called_at: iso(c.calledAt),
        outcome: c.outcome,
        answered_message_id: c.answeredMessageId,
        answered_at: iso(c.answeredAt),
        answered_by: c.answeredBy,
        answered_staff_id: c.answeredStaffId,
        seconds: c.seconds,
        business_seconds: c.businessSeconds,
      });
    }
  }

  // Counted again from the last resolution (not resumed): what is after it goes, and comes back below.
  const recounted = scopes.filter((s) => !s.open);
  if (recounted.length) {
    const doomed = sql`(select rc.id from report_cycles rc
      join jsonb_to_recordset(${JSON.stringify(recounted)}::jsonb) as s(conversation_id int, t timestamptz)
        on rc.conversation_id = s.conversation_id
      where rc.business_id = ${businessId} and (rc.resolved_at is null or rc.resolved_at >= s.t))`;
    const replies = await tx.execute<RemovedReply>(sql`
      delete from report_replies r where r.cycle_id in ${doomed}
      returning r.conversation_id, r.location_id, r.channel, r.waiting_since, r.staff_id, r.seconds, r.business_seconds`);
    for (const r of replies) replyDeltas(deltas, r, -1);
    const removed = await tx.execute<RemovedCycle>(sql`
      delete from report_cycles rc where rc.id in ${doomed}
      returning rc.conversation_id, rc.location_id, rc.channel, rc.started_at, rc.first_reply_staff_id,
        rc.first_response_seconds, rc.first_response_business_seconds, rc.resolved_at, rc.resolved_by_staff_id,
        rc.resolution_seconds, rc.resolution_business_seconds`);
    for (const c of removed) cycleDeltas(deltas, c, -1);
  }
  const scopeSql = sql`jsonb_to_recordset(${JSON.stringify(scopes)}::jsonb) as s(conversation_id int, t timestamptz, t_calls timestamptz)`;
  await tx.execute(sql`
    delete from report_missed_calls mc using ${scopeSql}
    where mc.business_id = ${businessId} and mc.conversation_id = s.conversation_id and mc.called_at >= s.t_calls`);
  if (resumed.length) {
    await tx.execute(sql`
      update report_cycles rc set client_messages = c.client_messages, replies = c.replies,
        -- A first reply counted before the resume stays as the row has it.
        first_reply_message_id = coalesce(c.first_reply_message_id, rc.first_reply_message_id),
        first_reply_at = coalesce(c.first_reply_at, rc.first_reply_at),
        first_reply_staff_id = case when c.first_reply_at is null then rc.first_reply_staff_id else c.first_reply_staff_id end,
        first_response_seconds = coalesce(c.first_response_seconds, rc.first_response_seconds),
        first_response_business_seconds = coalesce(c.first_response_business_seconds, rc.first_response_business_seconds),
        resolved_at = c.resolved_at, resolved_by_staff_id = c.resolved_by_staff_id, resolution_seconds = c.resolution_seconds,
        resolution_business_seconds = c.resolution_business_seconds, last_message_at = c.last_message_at,
        last_message_id = c.last_message_id, waiting_message_id = c.waiting_message_id, waiting_since = c.waiting_since,
        waiting_channel = c.waiting_channel
      from jsonb_to_recordset(${JSON.stringify(resumed)}::jsonb) as c(id bigint, client_messages int, replies int,
        first_reply_message_id bigint, first_reply_at timestamptz, first_reply_staff_id int, first_response_seconds float8,
        first_response_business_seconds float8, resolved_at timestamptz, resolved_by_staff_id int, resolution_seconds float8,
        resolution_business_seconds float8, last_message_at timestamptz, last_message_id bigint, waiting_message_id bigint,
        waiting_since timestamptz, waiting_channel text)
      where rc.id = c.id and rc.business_id = ${businessId}`);
  }
  if (cycles.length || resumedReplies.length) {
    // The cycles, then their reply times by the cycle id each got (start_message_id is unique per
    // conversation), and the reply times of the cycles gone on, by their own id.
    await tx.execute(sql`
      with c as (
        select * from jsonb_to_recordset(${JSON.stringify(cycles)}::jsonb) as c(
          conversation_id int, location_id int, channel text, start_message_id bigint,
          started_at timestamptz, client_messages int, replies int, first_reply_message_id bigint,
          first_reply_at timestamptz, first_reply_staff_id int, first_response_seconds float8,
          first_response_business_seconds float8, resolved_at timestamptz, resolved_by_staff_id int,
          resolution_seconds float8, resolution_business_seconds float8, last_message_at timestamptz,
          last_message_id bigint, waiting_message_id bigint, waiting_since timestamptz, waiting_channel text, reply_rows jsonb)
      ), inserted as (
        insert into report_cycles (business_id, conversation_id, location_id, channel, start_message_id, started_at,
          client_messages, replies, first_reply_message_id, first_reply_at, first_reply_staff_id, first_response_seconds,
          first_response_business_seconds, resolved_at, resolved_by_staff_id, resolution_seconds, resolution_business_seconds,
          last_message_at, last_message_id, waiting_message_id, waiting_since, waiting_channel)
        select ${businessId}, conversation_id, location_id, channel, start_message_id, started_at,
          client_messages, replies, first_reply_message_id, first_reply_at, first_reply_staff_id, first_response_seconds,
          first_response_business_seconds, resolved_at, resolved_by_staff_id, resolution_seconds, resolution_business_seconds,
          last_message_at, last_message_id, waiting_message_id, waiting_since, waiting_channel
        from c order by conversation_id, started_at
        returning id, conversation_id, start_message_id
      ), r as (
        select i.id as cycle_id, c.conversation_id, c.location_id, x.*
        from c join inserted i on i.conversation_id = c.conversation_id and i.start_message_id = c.start_message_id
        cross join lateral jsonb_to_recordset(c.reply_rows) as x(channel text, waiting_message_id bigint,
          waiting_since timestamptz, reply_message_id bigint, replied_at timestamptz, staff_id int, seconds float8,
          business_seconds float8)
        union all
        select x.cycle_id, rc.conversation_id, rc.location_id, x.channel, x.waiting_message_id, x.waiting_since,
          x.reply_message_id, x.replied_at, x.staff_id, x.seconds, x.business_seconds
        from jsonb_to_recordset(${JSON.stringify(resumedReplies)}::jsonb) as x(cycle_id bigint, channel text,
          waiting_message_id bigint, waiting_since timestamptz, reply_message_id bigint, replied_at timestamptz, staff_id int,
          seconds float8, business_seconds float8)
        join report_cycles rc on rc.id = x.cycle_id
      )
      insert into report_replies (business_id, cycle_id, conversation_id, location_id, channel, waiting_message_id,
        waiting_since, reply_message_id, replied_at, staff_id, seconds, business_seconds)
      select ${businessId}, cycle_id, conversation_id, location_id, channel, waiting_message_id,
        waiting_since, reply_message_id, replied_at, staff_id, seconds, business_seconds
      from r order by conversation_id, waiting_since`);
  }
  if (calls.length) {
    await tx.execute(sql`
      insert into report_missed_calls (business_id, conversation_id, location_id, call_message_id, called_at, outcome,
        answered_message_id, answered_at, answered_by, answered_staff_id, seconds, business_seconds)
      select ${businessId}, conversation_id, location_id, call_message_id, called_at, outcome,
        answered_message_id, answered_at, answered_by, answered_staff_id, seconds, business_seconds
      from jsonb_to_recordset(${JSON.stringify(calls)}::jsonb) as x(conversation_id int, location_id int,
        call_message_id bigint, called_at timestamptz, outcome text, answered_message_id bigint, answered_at timestamptz,
        answered_by text, answered_staff_id int, seconds float8, business_seconds float8)
      order by conversation_id, called_at`);
  }
}

/** How many conversations one recount statement covers when recounting a whole business. */
const RECOUNT_CHUNK = 200;

/**
 * Recounts every conversation of a business from the beginning: history that predates the handler
 * (the log keeps EVENT_RETENTION_DAYS), or after opening hours or zones changed and past figures
 * should follow. Then counts its rollups again from the rows: emptied first, then a day of rows per
 * transaction, oldest first (built_until), the handler meanwhile adding what it changes before that
 * point; reports read the rows themselves until the last stretch makes the rollups ready. A change
 * of zones meanwhile (or another recount of the business) starts the counting over. One short
 * transaction at a time; returns how many conversations were recounted.
 */
export async function recountBusinessReports(businessId: number, tx: Tx = db): Promise<number> {
  await tx.transaction(async (tx) => {
    const rollups = await openRollups(businessId, tx);
    await setRollupState(businessId, rollups.zones, { ready: false, builtUntil: null }, tx);
  });
  let after = 0;
  let total = 0;
  for (;;) {
    const ids = await tx.execute<{ id: number }>(sql`
      select id from conversations where business_id = ${businessId} and id > ${after} order by id limit ${RECOUNT_CHUNK}`);
    if (ids.length === 0) break;
    await tx.transaction((tx) =>
      recountReports(
        businessId,
        ids.map((r) => ({ conversationId: r.id, messageId: null, at: '-infinity' })),
        [],
        tx,
      ),
    );
    total += ids.length;
    after = ids[ids.length - 1]!.id;
  }
  for (let attempt = 0; attempt < 3; attempt++) if (await countRollupsAgain(businessId, tx)) return total;
  throw new Error(
    `business ${businessId}: its zones kept changing (or another recount of it ran) while its rollups were counted`,
  );
}
