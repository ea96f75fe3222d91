import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { ClientListResponse, StaffResponse } from '@/server/schemas/businesses';
import { db, type Tx } from '@/server/db/client';
import { preparedQuery } from '@/server/db/prepared';
import { businesses, businessSmsNumbers, clients, conversations, staff, type StaffRole } from '@/db/schema';
import { AppError, type ErrorLocation } from '@/server/errors';
import { MENTION_OPTIONS_MAX } from '@/server/shared/limits';
import { MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT, MAX_LIST_SEARCH_LENGTH } from '@/server/schemas/common';
import { escapeLike } from '@/server/lib/pg-text';
import { normalizePhone } from '@/server/lib/phone';
import { clientOptedOutColumns } from '@/server/services/messages/suppression';
import { clientMatches, clientSearchTerm, type ClientSearchTerm } from '@/server/services/search';

/**
 * Who is who in a business: its clients and staff (the lists of
 * docs/api.md#clients-staff-and-locations; clients by phone; its active staff) and its numbers (which business an SMS
 * number belongs to, the number it sends from by default).
 */
type DirectoryQuery = { search?: string; external_id?: string; page: number; page_size: number };

const likeTerm = (term: string) => `%${escapeLike(term)}%`;
const iso = (d: Date | string) => new Date(d).toISOString();

export async function listClients(businessId: number, q: DirectoryQuery, tx: Tx = db) {
  const where: SQL[] = [sql`cl.business_id = ${businessId}`];
  if (q.external_id) where.push(sql`cl.external_id = ${q.external_id}`);
  if (q.search) where.push(clientMatches('cl', businessId, clientSearchTerm(q.search, await businessCountry(businessId, tx))));
  const cond = sql.join(where, sql` and `);
  const [rows, [total]] = await Promise.all([
    tx.execute<Omit<z.input<typeof ClientListResponse>, 'created_at'> & { created_at: Date }>(sql`
      select cl.id as client_id, cl.external_id, cl.name as client_name, cl.email as client_email, cl.phone_number as client_phone_number,
        cl.gender as client_gender, cl.image_url as client_image_url, cl.client_type, cl.location_id, c.id as conversation_id,
        ${clientOptedOutColumns('cl')}, cl.created_at
      from clients cl left join conversations c on c.client_id = cl.id and c.business_id = cl.business_id
      where ${cond} order by cl.name nulls last, cl.id limit ${q.page_size} offset ${(q.page - 1) * q.page_size}`),
    tx.execute<{ n: number }>(sql`select count(*)::int as n from clients cl where ${cond}`),
  ]);
  return {
    clients: rows.map((r) => ({ ...r, created_at: iso(r.created_at) })),
    total_clients: total!.n,
    page: q.page,
    page_size: q.page_size,
    next_page: q.page * q.page_size < total!.n,
  };
}

/** The most clients one lookup answers (the inbox shows 8). */
export const CLIENT_LOOKUP_MAX = 20;

export type ClientLookupRow = {
  client_id: number;
  client_name: string | null;
  client_phone_number: string | null;
  client_email: string | null;
  client_type: string;
  /** The client's one conversation, or null when nobody has written yet. */
  conversation_id: number | null;
  last_activity_at: string | null;
  opted_out_sms: boolean;
  opted_out_email: boolean;
};

/**
 * The lookup's statement: the page of clients first, then their conversations and opt-outs (joined
 * before the LIMIT, a common term such as `example.com` joined every match's conversation: 0.7 s
 * for 3,600 matches). Its plans, and what they cost: docs/architecture.md#client-search.
 */
const lookupQuery = (businessId: number, t: ClientSearchTerm, limit: number) => sql`
  select cl.id as client_id, cl.name as client_name, cl.phone_number as client_phone_number, cl.email as client_email,
    cl.client_type, c.id as conversation_id, c.last_activity_at, ${clientOptedOutColumns('cl')}
  from (
    select cl.id, cl.business_id, cl.name, cl.phone_number, cl.email, cl.client_type,
      coalesce(cl.phone_number = ${t.phone}, false) as is_number, coalesce(cl.name ilike ${t.prefix}, false) as name_starts
    from clients cl
    where ${clientMatches('cl', businessId, t)}
    order by is_number desc, name_starts desc, cl.name nulls last, cl.id
    limit ${limit}
  ) cl
  left join conversations c on c.business_id = cl.business_id and c.client_id = cl.id
  order by cl.is_number desc, cl.name_starts desc, cl.name nulls last, cl.id`;

/**
 * The inbox's client lookup (docs/api.md#client-search): the top bar and New message find clients
 * with it as the user types. The business's clients that the term finds (clientMatches), at most
 * `limit` (1 to CLIENT_LOOKUP_MAX): first the client whose number the term is, then names that
 * start with the term, then by name. `phone_number`: the term read as a number in the business's
 * country (New message offers it as a new client when nobody has it), or null.
 * The term is trimmed and must have 3 to 100 characters, as every `search` filter (422 at `loc`).
 */
export async function lookupClients(
  businessId: number,
  rawTerm: string,
  { limit = 8, loc = ['query', 'term'] }: { limit?: number; loc?: ErrorLocation } = {},
  tx: Tx = db,
): Promise<{ clients: ClientLookupRow[]; phone_number: string | null }> {
  const term = rawTerm.trim();
  if (term.length < MIN_SEARCH_TERM_LENGTH) throw AppError.invalid(loc, SEARCH_TERM_TOO_SHORT, 'too_small');
  if (term.length > MAX_LIST_SEARCH_LENGTH)
    throw AppError.invalid(loc, `must be at most ${MAX_LIST_SEARCH_LENGTH} characters`, 'too_big');
  if (!Number.isInteger(limit) || limit < 1 || limit > CLIENT_LOOKUP_MAX)
    throw AppError.invalid(['query', 'limit'], `must be an integer from 1 to ${CLIENT_LOOKUP_MAX}`);
  const t = clientSearchTerm(term, await businessCountry(businessId, tx));
  const rows = await tx.execute<Omit<ClientLookupRow, 'last_activity_at'> & { last_activity_at: Date | string | null }>(
    lookupQuery(businessId, t, limit),
  );
  return {
    clients: rows.map((r) => ({ ...r, last_activity_at: r.last_activity_at === null ? null : iso(r.last_activity_at) })),
    phone_number: t.phone,
  };
}

const STAFF = sql`
  select s.id as staff_id, s.external_id, s.name as staff_name, s.email as staff_email, s.phone_number as staff_phone_number,
    s.gender as staff_gender, s.image_url as staff_image_url, s.role, s.location_id, s.active,
    (select count(*)::int from conversations c where c.business_id = s.business_id and c.assigned_staff_id = s.id and c.status = 'open') as open_conversations
  from staff s`;

export async function listStaff(businessId: number, q: DirectoryQuery, tx: Tx = db) {
  const where: SQL[] = [sql`s.business_id = ${businessId}`];
  if (q.external_id) where.push(sql`s.external_id = ${q.external_id}`);
  if (q.search)
    where.push(sql`(s.name || ' ' || coalesce(s.email, '') || ' ' || coalesce(s.phone_number, '')) ilike ${likeTerm(q.search)}`);
  const cond = sql.join(where, sql` and `);
  const [rows, [total]] = await Promise.all([
    tx.execute<z.input<typeof StaffResponse>>(
      sql`${STAFF} where ${cond} order by s.name, s.id limit ${q.page_size} offset ${(q.page - 1) * q.page_size}`,
    ),
    tx.execute<{ n: number }>(sql`select count(*)::int as n from staff s where ${cond}`),
  ]);
  return {
    staffs: [...rows],
    total_staffs: total!.n,
    page: q.page,
    page_size: q.page_size,
    next_page: q.page * q.page_size < total!.n,
  };
}

/**
 * The @mention picker's names (docs/api.md#mentions): the business's active staff whose name holds
 * `fragment`, case-insensitively, names that start with it first; searched here, so a business of
 * any size is offered everyone, not the first page of its list.
 */
export async function mentionableStaff(businessId: number, fragment: string, tx: Tx = db) {
  // ILIKE: the database folds the case of both sides, the same way.
  const f = escapeLike(fragment);
  const rows = await tx.execute<{ staff_id: number; staff_name: string; role: StaffRole }>(sql`
    select s.id as staff_id, s.name as staff_name, s.role from staff s
    where s.business_id = ${businessId} and s.active and s.name ilike ${`%${f}%`}
    order by s.name ilike ${`${f}%`} desc, s.name, s.id
    limit ${MENTION_OPTIONS_MAX}`);
  return [...rows];
}

/**
 * Every staff member of the business, active or not, as the inbox names them (the assignee menu,
 * who is viewing, who opted a client out): id, name and whether active, ordered by name. Not paged:
 * a name must never be missing because its owner sorts past a page (a team of 1,000 is ~40 KB).
 */
export async function staffNames(businessId: number, tx: Tx = db) {
  const rows = await tx.execute<{ staff_id: number; staff_name: string; active: boolean }>(sql`
    select s.id as staff_id, s.name as staff_name, s.active from staff s
    where s.business_id = ${businessId} order by s.name, s.id`);
  return { staffs: [...rows] };
}

export async function staffProfile(businessId: number, staffId: number, tx: Tx = db) {
  const [row] = await tx.execute<z.input<typeof StaffResponse>>(
    sql`${STAFF} where s.business_id = ${businessId} and s.id = ${staffId}`,
  );
  if (!row) throw AppError.notFound('Staff');
  return row;
}

/* ----------------------------------------------------------------------------------------------
 * Active staff
 * -------------------------------------------------------------------------------------------- */

/**
 * Active: the one definition of the staff who may be issued a session, act for the business
 * (assign, resolve, write notes, take a dialer token, place calls) and be rung for its calls.
 * Staff are deactivated, never deleted (docs/production.md). A live session's staff member is
 * re-checked by the session queries themselves (services/auth.ts), joined through the session.
 */
export const isActiveStaff = () => eq(staff.active, true);

/** The active staff of a business, as a condition on `staff`. */
export const activeStaffOf = (businessId: number): SQL => and(eq(staff.businessId, businessId), isActiveStaff())!;

// Built once with placeholders on the pool (server/db/prepared.ts); in a transaction, built on it.
const staffMemberQuery = preparedQuery((tx, p: { businessId: number; staffId: number }) =>
  tx
    .select({ id: staff.id, active: sql<boolean>`${isActiveStaff()}` })
    .from(staff)
    .where(and(eq(staff.businessId, p.businessId), eq(staff.id, p.staffId)))
    .limit(1)
    .prepare('require_staff'),
);

/** Staff member `staffId` of this business, and whether active; null when the business has no such member. */
export async function staffMember(businessId: number, staffId: number, tx: Tx = db) {
  const [member] = await staffMemberQuery({ businessId, staffId }, tx);
  return member ?? null;
}

/** An active staff member of this business, or a 422 at `loc`. */
export async function requireStaff(businessId: number, staffId: number, loc: ['body' | 'query', string], tx: Tx = db) {
  const member = await staffMember(businessId, staffId, tx);
  if (!member) throw AppError.invalid(loc, `Staff ${staffId} not found in this business`);
  if (!member.active) throw AppError.invalid(loc, `Staff ${staffId} is not active`);
  return member.id;
}

/** The role of an active staff member of the business; null if there is no such member. */
export async function staffRole(businessId: number, staffId: number, tx: Tx = db): Promise<StaffRole | null> {
  const [member] = await tx
    .select({ role: staff.role })
    .from(staff)
    .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId), isActiveStaff()))
    .limit(1);
  return member?.role ?? null;
}

/** The active staff member `staffId` of whichever business they belong to (a dialer identity names only the staff member). */
export async function activeStaffMember(staffId: number, tx: Tx = db): Promise<{ id: number; businessId: number } | null> {
  const [member] = await tx
    .select({ id: staff.id, businessId: staff.businessId })
    .from(staff)
    .where(and(eq(staff.id, staffId), isActiveStaff()))
    .limit(1);
  return member ?? null;
}

/* ----------------------------------------------------------------------------------------------
 * Numbers and clients by phone
 * -------------------------------------------------------------------------------------------- */

/** The business that owns an SMS number (E.164), with its country, the region its callers' numbers are read in. */
export async function businessForNumber(to: string, tx: Tx = db): Promise<{ businessId: number; country: string } | null> {
  const [row] = await tx.execute<{ business_id: number; country: string }>(sql`
    select n.business_id, b.country from business_sms_numbers n join businesses b on b.id = n.business_id
    where n.phone_number = ${to} limit 1`);
  return row ? { businessId: row.business_id, country: row.country } : null;
}

/** The number a business sends from when none is given (its default SMS number, else its first), or null when it has none. */
export async function defaultSmsNumber(businessId: number, tx: Tx = db): Promise<string | null> {
  const [row] = await tx
    .select({ phone: businessSmsNumbers.phoneNumber })
    .from(businessSmsNumbers)
    .where(eq(businessSmsNumbers.businessId, businessId))
    .orderBy(desc(businessSmsNumbers.isDefault), asc(businessSmsNumbers.id))
    .limit(1);
  return row?.phone ?? null;
}

/** Finds the client with this number (oldest first), or creates a `lead`, under an advisory lock. */
export async function findOrCreateClientByPhone(businessId: number, phone: string, tx: Tx): Promise<number> {
  await tx.execute(sql`select pg_advisory_xact_lock(${businessId}, hashtext(${phone}))`);
  const [existing] = await tx
    .select({ id: clients.id })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.phoneNumber, phone)))
    .orderBy(asc(clients.id))
    .limit(1);
  if (existing) return existing.id;
  const [created] = await tx
    .insert(clients)
    .values({ businessId, phoneNumber: phone, clientType: 'lead' })
    .returning({ id: clients.id });
  return created!.id;
}

/**
 * Finds the client with this email address (case-insensitive, oldest first), or creates a `lead`
 * with it (and `name`, when known), under the same advisory lock as every other lead creation.
 */
export async function findOrCreateClientByEmail(
  businessId: number,
  email: string,
  name?: string | null,
  tx: Tx = db,
): Promise<number> {
  const address = email.trim().toLowerCase();
  await tx.execute(sql`select pg_advisory_xact_lock(${businessId}, hashtext(${`email:${address}`}))`);
  const [existing] = await tx
    .select({ id: clients.id })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), sql`lower(${clients.email}) = ${address}`))
    .orderBy(asc(clients.id))
    .limit(1);
  if (existing) return existing.id;
  const [created] = await tx
    .insert(clients)
    .values({ businessId, email: address, name: name ?? null, clientType: 'lead' })
    .returning({ id: clients.id });
  return created!.id;
}

/** The business's country (ISO 3166 alpha-2), in which its people's numbers are read; US when unknown. */
export async function businessCountry(businessId: number, tx: Tx = db): Promise<string> {
  const [row] = await tx.select({ country: businesses.country }).from(businesses).where(eq(businesses.id, businessId));
  return row?.country ?? 'US';
}

/**
 * The business's client behind a caller's number (oldest first) and their conversation, or null.
 * The number is read as the business's callers' numbers are: in the business's own country.
 */
export async function clientForCaller(
  businessId: number,
  phone: string,
  tx: Tx = db,
): Promise<{ clientId: number; name: string | null; conversationId: number | null } | null> {
  const normalised = normalizePhone(phone, await businessCountry(businessId, tx));
  if (!normalised) return null;
  const [row] = await tx
    .select({ clientId: clients.id, name: clients.name, conversationId: conversations.id })
    .from(clients)
    .leftJoin(conversations, and(eq(conversations.businessId, clients.businessId), eq(conversations.clientId, clients.id)))
    .where(and(eq(clients.businessId, businessId), eq(clients.phoneNumber, normalised)))
    .orderBy(asc(clients.id))
    .limit(1);
  return row ?? null;
}
