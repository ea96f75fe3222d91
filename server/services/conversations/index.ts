import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { db, type Tx } from '@/server/db/client';
import { executePrepared, fixedStatement, preparedQuery } from '@/server/db/prepared';
import { isoTimestamp } from '@/db/sql-json';
import { conversations, type ConversationStatus } from '@/db/schema';
import { AppError } from '@/server/errors';
import { recordEvents, staffOrApi, type NewEvent } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';
import type { ClientDetailsResponse, ConversationListQuery } from '@/server/schemas/businesses';
import { businessCountry, requireStaff } from '@/server/services/directory';
import { clientMatches, clientSearchTerm, type ClientSearchTerm } from '@/server/services/search';
import { keptTotalSql, type KeptFilter } from './counts';
import { hasUnseenMention } from './mentions';
import { clientOptedOutColumns } from '@/server/services/messages/suppression';

type Details = z.input<typeof ClientDetailsResponse>;

/**
 * Conversations (docs/api.md#conversations, #conversation-statuses): the list with its filters and counts, details,
 * assignment, status with snooze, labels. One SELECT shape (below) serves the list and every
 * single-conversation answer; tenancy is in every WHERE.
 */
/**
 * What the conversation list shows for a conversation (docs/api.md#previews): the client's latest
 * unread message while there is one (a later text of ours does not hide what needs an answer),
 * else the latest message, a note included and said to be one. Two index probes at most per row
 * (the newest unread inbound, found on messages_conversation_sent_idx; else last_message_id), only
 * for the rows of the page; UNION ALL with LIMIT 1 stops at the first branch that has a row.
 */
const PREVIEW_JOIN = sql`
  left join lateral (
    (select m.id, m.message_type, m.channel, m.direction, m.status, m.content, m.send_at, true as unread
     from messages m
     where c.unread_count > 0 and m.business_id = c.business_id and m.conversation_id = c.id
       and m.direction = 'inbound' and not m.is_read and m.message_type <> 'NOTE'
     order by m.sent_at desc, m.id desc limit 1)
    union all
    (select m.id, m.message_type, m.channel, m.direction, m.status, m.content, m.send_at, false
     from messages m where m.business_id = c.business_id and m.id = c.last_message_id)
    limit 1
  ) p on true`;
/** At most this many characters of the preview's text: a list row shows one line. */
export const PREVIEW_LENGTH = 200;
const PREVIEW_COLUMN = sql`case when p.id is null then null else json_build_object(
    'message_id', p.id, 'message_type', p.message_type, 'channel', p.channel, 'direction', p.direction,
    'status', p.status, 'content', left(p.content, ${sql.raw(String(PREVIEW_LENGTH))}),
    'send_at', ${isoTimestamp(sql`p.send_at`)}, 'unread', p.unread) end`;

const detailsColumns = (timestamp: (column: SQL) => SQL) => sql`
  select cl.id as client_id, c.id as conversation_id, cl.name as client_name, cl.gender as client_gender,
    cl.image_url as client_image_url, cl.email as client_email, cl.phone_number as client_phone_number,
    cl.client_type, ${clientOptedOutColumns('cl')}, coalesce(c.location_id, cl.location_id) as location_id,
    c.status, ${timestamp(sql`c.snoozed_until`)} as snoozed_until, u.name as updated_by, coalesce(c.unread_count, 0) as unread_messages_count,
    c.last_channel as last_updated_channel, coalesce(c.flagged_count, 0) as messages_flagged_count,
    ${timestamp(sql`c.last_activity_at`)} as last_updated_at, c.label, c.last_message_content, r.name as resolved_by,
    a.name as assigned_to, c.assigned_staff_id, a.name as staff_name, a.gender as staff_gender, a.image_url as staff_image_url,
    c.last_message_id, c.last_read_message_id, c.possible_opt_out_message_id,
    c.needs_attention_reason, c.needs_attention_appointment_id, ${timestamp(sql`c.needs_attention_since`)} as needs_attention_since,
    ${PREVIEW_COLUMN} as preview`;
const DETAILS = detailsColumns((column) => column);
/** The same columns with the timestamps as the API writes them (toDetails), for JSON built in SQL. */
const DETAILS_JSON = detailsColumns(isoTimestamp);
const JOINS = sql`
  left join staff a on a.id = c.assigned_staff_id
  left join staff r on r.id = c.resolved_by_staff_id
  left join staff u on u.id = c.updated_by_staff_id
  ${PREVIEW_JOIN}`;

type Row = Omit<Details, 'snoozed_until' | 'last_updated_at' | 'needs_attention_since'> & {
  snoozed_until: Date | null;
  last_updated_at: Date | null;
  needs_attention_since: Date | null;
};

function toDetails(row: Row): Details {
  return {
    ...row,
    snoozed_until: row.snoozed_until ? new Date(row.snoozed_until).toISOString() : null,
    last_updated_at: row.last_updated_at ? new Date(row.last_updated_at).toISOString() : null,
    needs_attention_since: row.needs_attention_since ? new Date(row.needs_attention_since).toISOString() : null,
  };
}

type ById = { businessId: number; id: number };
const detailsStatement = fixedStatement<ById>(
  (p) => sql`${DETAILS} from conversations c join clients cl on cl.id = c.client_id ${JOINS}
    where c.business_id = ${p.businessId} and c.id = ${p.id}`,
);
const clientDetailsStatement = fixedStatement<ById>(
  (
    p,
  ) => sql`${DETAILS} from clients cl left join conversations c on c.client_id = cl.id and c.business_id = cl.business_id ${JOINS}
    where cl.business_id = ${p.businessId} and cl.id = ${p.id}`,
);

export async function conversationDetails(businessId: number, conversationId: number, tx: Tx = db): Promise<Details> {
  // Outside a transaction as a prepared statement rendered once (server/db/prepared.ts); inside one, on it.
  const [row] = await detailsStatement<Row>({ businessId, id: conversationId }, '', tx);
  if (!row) throw AppError.notFound('Conversation');
  return toDetails(row);
}

/** Client details (docs/api.md#clients-staff-and-locations): `null` for a client this business does not have. */
export async function clientDetails(businessId: number, clientId: number, tx: Tx = db): Promise<Details | null> {
  const [row] = await clientDetailsStatement<Row>({ businessId, id: clientId }, '', tx);
  return row ? toDetails(row) : null;
}

/** The conversation row, or 404 (an id in the path that this business does not have). */
// Built once with placeholders on the pool (server/db/prepared.ts); in a transaction, built on it.
const loadConversationQuery = preparedQuery((tx, p: { businessId: number; conversationId: number }) =>
  tx
    .select()
    .from(conversations)
    .where(and(eq(conversations.businessId, p.businessId), eq(conversations.id, p.conversationId)))
    .limit(1)
    .prepare('load_conversation'),
);

export async function loadConversation(businessId: number, conversationId: number, tx: Tx = db) {
  const [row] = await loadConversationQuery({ businessId, conversationId }, tx);
  if (!row) throw AppError.notFound('Conversation');
  return row;
}

export type Conversation = Awaited<ReturnType<typeof loadConversation>>;

/**
 * A conversation named by id (REST: loaded here, 404 when this business has no such conversation)
 * or already loaded by the caller for this business (the inbox's conversationProcedure), which
 * saves loading it again.
 */
export type ConversationRef = number | Conversation;

/** The conversation a ConversationRef names, loaded when given by id; tenancy checked either way. */
export async function resolveConversation(businessId: number, ref: ConversationRef, tx: Tx = db): Promise<Conversation> {
  if (typeof ref === 'number') return loadConversation(businessId, ref, tx);
  if (ref.businessId !== businessId) throw AppError.notFound('Conversation');
  return ref;
}

type ListQuery = z.output<typeof ConversationListQuery>;

/**
 * The list's WHERE. Its text depends only on which filters are given (and the assignment, unread,
 * flagged choices, written as literals), never on their values, which may be drizzle placeholders:
 * the statement without a search is rendered once per such shape (listShape, server/db/prepared.ts).
 */
function listConditions(businessId: unknown, q: Omit<ListFilters, 'page' | 'page_size'>, staffId: unknown): SQL[] {
  const where: SQL[] = [sql`c.business_id = ${businessId}`];
  if (q.status !== undefined) where.push(sql`c.status = any(${sql.param(q.status)}::text[])`);
  if (q.assignment === 'mine') {
    if (staffId === null)
      throw AppError.invalid(['query', 'staff_id'], 'Required for assignment=mine with an API key', 'missing');
    where.push(sql`c.assigned_staff_id = ${staffId}`);
  }
  if (q.assignment === 'unassigned') where.push(sql`c.assigned_staff_id is null`);
  if (q.assignment === 'assigned') where.push(sql`c.assigned_staff_id is not null`);
  if (q.channel) where.push(sql`c.last_channel = ${q.channel}`);
  if (q.location_id !== undefined) where.push(sql`c.location_id = ${q.location_id}`);
  if (q.label) where.push(sql`c.label = ${q.label}`);
  if (q.unread !== undefined) where.push(q.unread ? sql`c.unread_count > 0` : sql`c.unread_count = 0`);
  if (q.flagged !== undefined) where.push(q.flagged ? sql`c.flagged_count > 0` : sql`c.flagged_count = 0`);
  // true: the partial index conversations_business_possible_opt_out_idx serves the page.
  if (q.possible_opt_out !== undefined)
    where.push(q.possible_opt_out ? sql`c.possible_opt_out_message_id is not null` : sql`c.possible_opt_out_message_id is null`);
  // The inbox's Mentions view (docs/api.md#mentions): the signed-in staff member's unseen mentions.
  if (q.mentioned) where.push(hasUnseenMention(businessId, staffId));
  // Needs attention (docs/api.md#needs-attention); true: the partial index conversations_business_needs_attention_idx.
  if (q.needs_attention !== undefined)
    where.push(q.needs_attention ? sql`c.needs_attention_reason is not null` : sql`c.needs_attention_reason is null`);
  if (q.search) {
    if (!q.clientTerm) throw new Error('a search needs its client term (listPage reads it)');
    where.push(clientMatches('cl', businessId, q.clientTerm));
  }
  return where;
}

type ListValues = {
  businessId: number;
  staffId: number | null;
  status: ListQuery['status'];
  channel: ListQuery['channel'];
  locationId: ListQuery['location_id'];
  label: ListQuery['label'];
  limit: number;
  offset: number;
};
/** `clientTerm`: the `search` as the client search reads it (server/services/search.ts), with it. */
type ListFilters = Omit<InboxListQuery, 'page' | 'page_size' | 'staff_id'> & { clientTerm?: ClientSearchTerm };
/** The list as the inbox asks for it: the REST query, and its Mentions view (docs/api.md#mentions). */
type InboxListQuery = ListQuery & { mentioned?: boolean };

/**
 * One statement: the total, and the page's ids from the (business_id, last_activity_at desc nulls
 * last, id desc nulls last) indexes — the ORDER BY must name the same null ordering to use them —
 * with only those rows joined; the count skips the clients join unless a search needs it
 * (bench:inbox, 1M messages). A page past the end is one row with the total and no conversation.
 * `q` decides the shape (which filters), `p` gives the values (or placeholders for them).
 */
function listQuery(p: ListValues, q: ListFilters): SQL {
  const filters = {
    ...q,
    status: q.status?.length ? p.status : undefined,
    channel: q.channel !== undefined ? p.channel : undefined,
    location_id: q.location_id !== undefined ? p.locationId : undefined,
    label: q.label !== undefined ? p.label : undefined,
  };
  const where = sql.join(listConditions(p.businessId, filters, p.staffId), sql` and `);
  const clientsJoin = q.search ? sql`join clients cl on cl.id = c.client_id` : sql``;
  const kept = keptFilter(p, q);
  const total = kept
    ? keptTotalSql(p.businessId, kept)
    : sql`(select count(*)::int from conversations c ${clientsJoin} where ${where})`;
  // The page as JSON text, built here rather than from 25 parsed rows in Node (see listConversationsJson).
  return sql`
    select t.total, coalesce(j.items, '[]')::text as items from (select ${total} as total) t
    left join lateral (
      select json_agg(to_json(d) order by page.last_activity_at desc nulls last, page.id desc nulls last) as items
      from (select c.id, c.last_activity_at from conversations c ${clientsJoin} where ${where}
            order by c.last_activity_at desc nulls last, c.id desc nulls last
            limit ${p.limit} offset ${p.offset}) page
      cross join lateral (${DETAILS_JSON}
        from conversations c join clients cl on cl.id = c.client_id ${JOINS}
        where c.id = page.id) d
    ) j on true`;
}

/**
 * The kept count that is the list's total (counts.ts) when at most one dimension is
 * filtered and there is no search: a few dozen kept rows instead of counting every matching
 * conversation (bench:inbox: 20,000 conversations cost ~6 ms of the database per page). Otherwise
 * null: the total is counted.
 */
function keptFilter(p: ListValues, q: ListFilters): KeptFilter | null {
  const one = (v: unknown) => sql`array[${v}::text]`;
  const none = sql`array['']`;
  const filters: KeptFilter[] = [];
  if (q.status?.length) filters.push({ dimension: 'status', values: sql`${sql.param(p.status)}::text[]` });
  if (q.assignment === 'mine') filters.push({ dimension: 'assignee', values: one(p.staffId) });
  if (q.assignment === 'unassigned') filters.push({ dimension: 'assignee', values: none });
  if (q.assignment === 'assigned') filters.push({ dimension: 'assignee', values: none, negate: true });
  if (q.channel !== undefined) filters.push({ dimension: 'channel', values: one(p.channel) });
  if (q.location_id !== undefined) filters.push({ dimension: 'location', values: one(p.locationId) });
  if (q.label !== undefined) filters.push({ dimension: 'label', values: one(p.label) });
  for (const dimension of ['unread', 'flagged', 'possible_opt_out'] as const)
    if (q[dimension] !== undefined) filters.push({ dimension, values: none, negate: !q[dimension] });
  // Mentions are not a kept count: with them the total is counted (a staff member's few conversations).
  // Nor is Needs attention: counted, on its partial index.
  if (q.search || q.mentioned || q.needs_attention !== undefined || filters.length > 1) return null;
  return filters[0] ?? { dimension: 'all' };
}

/** What changes the list statement's text (not its values): which filters are given, and how. */
const listShape = (q: ListFilters) =>
  JSON.stringify({
    status: Boolean(q.status?.length),
    assignment: q.assignment,
    channel: q.channel !== undefined,
    location: q.location_id !== undefined,
    label: q.label !== undefined,
    unread: q.unread,
    flagged: q.flagged,
    possibleOptOut: q.possible_opt_out,
    mentioned: q.mentioned,
    needsAttention: q.needs_attention,
  });

const listStatement = fixedStatement<ListValues>((p, shape) => {
  const s = JSON.parse(shape) as {
    status: boolean;
    assignment: ListQuery['assignment'];
    channel: boolean;
    location: boolean;
    label: boolean;
    unread?: boolean;
    flagged?: boolean;
    possibleOptOut?: boolean;
    mentioned?: boolean;
    needsAttention?: boolean;
  };
  // Stand-ins where a filter is present: listQuery then takes the placeholder from `p`.
  return listQuery(p, {
    status: s.status ? ['open'] : undefined,
    assignment: s.assignment,
    channel: s.channel ? 'sms' : undefined,
    location_id: s.location ? 1 : undefined,
    label: s.label ? 'label' : undefined,
    unread: s.unread,
    flagged: s.flagged,
    possible_opt_out: s.possibleOptOut,
    mentioned: s.mentioned,
    needs_attention: s.needsAttention,
  });
});

/**
 * GET /conversations as JSON text (the REST answer): filters of docs/api.md#conversations, newest
 * activity first, page-based. The page's conversations come from PostgreSQL as one JSON array, so
 * Node neither parses 25 rows of 30 columns nor serialises them again (bench:inbox's profile).
 */
export async function listConversationsJson(
  businessId: number,
  q: InboxListQuery,
  staffId: number | null,
  tx: Tx = db,
): Promise<string> {
  const { items, total } = await listPage(businessId, q, staffId, tx);
  return `{"conversations":${items},"total_conversations":${total},"page":${q.page},"page_size":${q.page_size},"next_page":${q.page * q.page_size < total}}`;
}

/** The same list as objects (the inbox's tRPC procedure). */
export async function listConversations(
  businessId: number,
  q: InboxListQuery,
  staffId: number | null,
  tx: Tx = db,
): Promise<{ conversations: Details[]; total_conversations: number; page: number; page_size: number; next_page: boolean }> {
  return JSON.parse(await listConversationsJson(businessId, q, staffId, tx));
}

async function listPage(
  businessId: number,
  q: InboxListQuery,
  staffId: number | null,
  tx: Tx = db,
): Promise<{ items: string; total: number }> {
  if (q.location_id !== undefined) {
    const [loc] = await executePrepared(
      sql`select 1 as found from locations where business_id = ${businessId} and id = ${q.location_id}`,
      tx,
    );
    if (!loc) throw AppError.invalid(['query', 'location_id'], `Location ${q.location_id} not found in this business`);
  }
  if (q.assignment === 'mine' && staffId === null)
    throw AppError.invalid(['query', 'staff_id'], 'Required for assignment=mine with an API key', 'missing');
  const values: ListValues = {
    businessId,
    staffId,
    status: q.status,
    channel: q.channel,
    locationId: q.location_id,
    label: q.label,
    limit: q.page_size,
    offset: (q.page - 1) * q.page_size,
  };
  // Prepared and rendered once per shape (server/db/prepared.ts) except with a search, whose plan depends on the term.
  const [row] = q.search
    ? await tx.execute<{ items: string; total: number }>(
        listQuery(values, { ...q, clientTerm: clientSearchTerm(q.search, await businessCountry(businessId, tx)) }),
      )
    : await listStatement<{ items: string; total: number }>(values, listShape(q), tx);
  return row!;
}

type ConversationChange = Pick<
  Partial<typeof conversations.$inferInsert>,
  | 'status'
  | 'snoozedUntil'
  | 'assignedStaffId'
  | 'label'
  | 'resolvedByStaffId'
  | 'updatedByStaffId'
  | 'needsAttentionReason'
  | 'needsAttentionAppointmentId'
  | 'needsAttentionSince'
>;

/**
 * Applies a change to one conversation and writes its events (docs/architecture.md#event-log):
 * one per field that really changed, with its previous value, so a repeated request records
 * nothing. `activity`: status and assignment changes count as activity (docs/api.md#conversations,
 * Activity); labels do not.
 */
async function updateConversation(
  businessId: number,
  conversationId: number,
  set: ConversationChange,
  actor: EventActor,
  activity = true,
  tx: Tx = db,
) {
  return tx.transaction(async (tx) => {
    const [before] = await tx
      .select({
        status: conversations.status,
        snoozedUntil: conversations.snoozedUntil,
        assignedStaffId: conversations.assignedStaffId,
        label: conversations.label,
      })
      .from(conversations)
      .where(and(eq(conversations.businessId, businessId), eq(conversations.id, conversationId)))
      // The UPDATE's own lock strength: FOR UPDATE would also wait for, and deadlock with, a message
      // insert's foreign-key check on the conversation (KEY SHARE) that then touches it.
      .for('no key update');
    if (!before) throw AppError.notFound('Conversation');
    await tx
      .update(conversations)
      .set(activity ? { ...set, lastActivityAt: sql`now()` } : set)
      .where(and(eq(conversations.businessId, businessId), eq(conversations.id, conversationId)));
    await recordEvents(changeEvents(businessId, conversationId, before, set, actor), tx);
    return conversationDetails(businessId, conversationId, tx);
  });
}

function changeEvents(
  businessId: number,
  conversationId: number,
  before: { status: ConversationStatus; snoozedUntil: Date | null; assignedStaffId: number | null; label: string | null },
  set: ConversationChange,
  actor: EventActor,
): NewEvent[] {
  const about = { businessId, conversationId, actor };
  const events: NewEvent[] = [];
  if (set.assignedStaffId !== undefined && set.assignedStaffId !== before.assignedStaffId) {
    events.push({
      ...about,
      type: 'conversation.assigned',
      data: {
        conversation_id: conversationId,
        staff_id: set.assignedStaffId,
        previous_staff_id: before.assignedStaffId,
        by: 'manual',
      },
    });
  }
  if (set.status !== undefined && set.status !== before.status) {
    events.push({
      ...about,
      type: 'conversation.status_changed',
      data: { conversation_id: conversationId, status: set.status, previous_status: before.status },
    });
  }
  const snoozedUntil = set.status === 'snoozed' ? set.snoozedUntil : null;
  if (snoozedUntil instanceof Date && snoozedUntil.getTime() !== before.snoozedUntil?.getTime()) {
    events.push({
      ...about,
      type: 'conversation.snoozed',
      data: { conversation_id: conversationId, snoozed_until: snoozedUntil.toISOString() },
    });
  }
  if (set.label !== undefined && set.label !== before.label) {
    events.push({
      ...about,
      type: 'conversation.labeled',
      data: { conversation_id: conversationId, label: set.label, previous_label: before.label },
    });
  }
  return events;
}

/** POST /assign: an active staff member of the business, or null to unassign. */
export async function assignConversation(
  businessId: number,
  conversation: ConversationRef,
  staffId: number | null,
  actingStaffId: number | null,
  tx: Tx = db,
) {
  const { id } = await resolveConversation(businessId, conversation, tx);
  if (staffId !== null) await requireStaff(businessId, staffId, ['body', 'staff_id'], tx);
  const set = { assignedStaffId: staffId, updatedByStaffId: actingStaffId };
  return updateConversation(businessId, id, set, staffOrApi(actingStaffId), true, tx);
}

/** POST /status: any status to any other (docs/api.md#conversation-statuses); snoozed needs a future time, resolved records who. */
export async function setConversationStatus(
  businessId: number,
  conversation: ConversationRef,
  body: { status: ConversationStatus; snoozed_until?: Date; staff_id?: number },
  sessionStaffId: number | null,
  tx: Tx = db,
) {
  const { id } = await resolveConversation(businessId, conversation, tx);
  const acting =
    body.staff_id !== undefined ? await requireStaff(businessId, body.staff_id, ['body', 'staff_id'], tx) : sessionStaffId;
  return updateConversation(
    businessId,
    id,
    {
      status: body.status,
      snoozedUntil: body.status === 'snoozed' ? body.snoozed_until! : null,
      resolvedByStaffId: body.status === 'resolved' ? acting : null,
      updatedByStaffId: acting,
      // Resolving is staff acting on it: "Needs attention" (docs/api.md#needs-attention) is cleared.
      ...(body.status === 'resolved'
        ? { needsAttentionReason: null, needsAttentionAppointmentId: null, needsAttentionSince: null }
        : {}),
    },
    staffOrApi(acting),
    true,
    tx,
  );
}

/** POST /label: a label of 1–50 characters, or null to clear it. */
export async function labelConversation(
  businessId: number,
  conversation: ConversationRef,
  label: string | null,
  actingStaffId: number | null,
  tx: Tx = db,
) {
  const { id } = await resolveConversation(businessId, conversation, tx);
  return updateConversation(businessId, id, { label, updatedByStaffId: actingStaffId }, staffOrApi(actingStaffId), false, tx);
}

/**
 * Snoozed conversations whose time has passed open again (run every minute by the worker): each
 * wake-up is a `conversation.status_changed` (snoozed → open) and a `conversation.woke`, by the system.
 */
export async function wakeSnoozedConversations(tx: Tx = db): Promise<number> {
  return tx.transaction(async (tx) => {
    const rows = await tx.execute<{ id: number; business_id: number }>(sql`
      update conversations set status = 'open', snoozed_until = null
      where status = 'snoozed' and snoozed_until <= now()
      returning id, business_id`);
    const system = { type: 'system' } as const;
    await recordEvents(
      rows.flatMap((r): NewEvent[] => [
        {
          type: 'conversation.status_changed',
          businessId: r.business_id,
          conversationId: r.id,
          actor: system,
          data: { conversation_id: r.id, status: 'open', previous_status: 'snoozed' },
        },
        {
          type: 'conversation.woke',
          businessId: r.business_id,
          conversationId: r.id,
          actor: system,
          data: { conversation_id: r.id },
        },
      ]),
      tx,
    );
    return rows.length;
  });
}
