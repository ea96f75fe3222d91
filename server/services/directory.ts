import { and, asc, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { ClientListResponse, StaffResponse } from '@/server/schemas/businesses';
import { db, type Tx } from '@/server/db/client';
import { preparedQuery } from '@/server/db/prepared';
import { businesses, businessSmsNumbers, clients, conversations, staff, type StaffRole } from '@/db/schema';
import { AppError } from '@/server/errors';
import { escapeLike } from '@/server/lib/pg-text';
import { normalizePhone } from '@/server/lib/phone';
import { clientOptedOutColumns } from '@/server/services/messages/suppression';

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
  if (q.search)
    where.push(
      sql`(coalesce(cl.name, '') || ' ' || coalesce(cl.email, '') || ' ' || coalesce(cl.phone_number, '')) ilike ${likeTerm(q.search)}`,
    );
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
