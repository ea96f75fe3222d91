import { sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { ClientListResponse, StaffResponse } from '@/server/schemas/businesses';
import { db } from '@/db/client';
import { AppError } from '@/server/errors';
import { escapeLike } from '@/server/lib/pg-text';

/** Clients and staff lists (SPEC §6 business-clients, business-staffs). */
type DirectoryQuery = { search?: string; external_id?: string; page: number; page_size: number };

const likeTerm = (term: string) => `%${escapeLike(term)}%`;
const iso = (d: Date | string) => new Date(d).toISOString();

export async function listClients(businessId: number, q: DirectoryQuery) {
  const where: SQL[] = [sql`cl.business_id = ${businessId}`];
  if (q.external_id) where.push(sql`cl.external_id = ${q.external_id}`);
  if (q.search)
    where.push(
      sql`(coalesce(cl.name, '') || ' ' || coalesce(cl.email, '') || ' ' || coalesce(cl.phone_number, '')) ilike ${likeTerm(q.search)}`,
    );
  const cond = sql.join(where, sql` and `);
  const [rows, [total]] = await Promise.all([
    db.execute<Omit<z.input<typeof ClientListResponse>, 'created_at'> & { created_at: Date }>(sql`
      select cl.id as client_id, cl.external_id, cl.name as client_name, cl.email as client_email, cl.phone_number as client_phone_number,
        cl.gender as client_gender, cl.image_url as client_image_url, cl.client_type, cl.location_id, c.id as conversation_id,
        cl.opted_out_sms, cl.opted_out_email, cl.created_at
      from clients cl left join conversations c on c.client_id = cl.id and c.business_id = cl.business_id
      where ${cond} order by cl.name nulls last, cl.id limit ${q.page_size} offset ${(q.page - 1) * q.page_size}`),
    db.execute<{ n: number }>(sql`select count(*)::int as n from clients cl where ${cond}`),
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

export async function listStaff(businessId: number, q: DirectoryQuery) {
  const where: SQL[] = [sql`s.business_id = ${businessId}`];
  if (q.external_id) where.push(sql`s.external_id = ${q.external_id}`);
  if (q.search)
    where.push(sql`(s.name || ' ' || coalesce(s.email, '') || ' ' || coalesce(s.phone_number, '')) ilike ${likeTerm(q.search)}`);
  const cond = sql.join(where, sql` and `);
  const [rows, [total]] = await Promise.all([
    db.execute<z.input<typeof StaffResponse>>(
      sql`${STAFF} where ${cond} order by s.name, s.id limit ${q.page_size} offset ${(q.page - 1) * q.page_size}`,
    ),
    db.execute<{ n: number }>(sql`select count(*)::int as n from staff s where ${cond}`),
  ]);
  return {
    staffs: [...rows],
    total_staffs: total!.n,
    page: q.page,
    page_size: q.page_size,
    next_page: q.page * q.page_size < total!.n,
  };
}

export async function staffProfile(businessId: number, staffId: number) {
  const [row] = await db.execute<z.input<typeof StaffResponse>>(
    sql`${STAFF} where s.business_id = ${businessId} and s.id = ${staffId}`,
  );
  if (!row) throw AppError.notFound('Staff');
  return row;
}
