import { and, asc, count, eq, or, sql, type SQL } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import type { z } from 'zod';
import { db, type Tx } from '@/server/db/client';
import { businesses, clients, locations, savedReplies, staff } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { escapeLike } from '@/server/lib/pg-text';
import { displayPhone } from '@/server/lib/phone';
import type { CreateSavedReplyRequest, SavedReplyListQuery, UpdateSavedReplyRequest } from '@/server/schemas/saved-replies';
import {
  firstName,
  MAX_SAVED_REPLY_SMS_BODY,
  placeholdersIn,
  resolveTemplate,
  TEMPLATE_VARIABLES,
  unknownVariables,
  type Resolved,
  type SavedReplyChannel,
  type TemplateContext,
} from '@/server/shared/templates';

/**
 * Saved replies (docs/api.md#saved-replies): a business's reusable texts, managed over REST and in
 * the inbox's settings, and resolved per recipient when sent (the composer, REST sends naming a
 * saved_reply_id). Every query is scoped to the business.
 */

type Row = typeof savedReplies.$inferSelect;
type Fields = { title: string; body: string; channel: SavedReplyChannel | null; subject: string | null };

const TITLE_KEY = 'saved_replies_business_title_key';

function toSavedReply(r: Row) {
  return {
    saved_reply_id: r.id,
    business_id: r.businessId,
    title: r.title,
    body: r.body,
    channel: r.channel,
    subject: r.subject,
    variables: placeholdersIn(`${r.subject ?? ''}\n${r.body}`),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}
export type SavedReplyOut = ReturnType<typeof toSavedReply>;

/**
 * The rules a saved reply meets as a whole, once the stored row and the change are merged: only
 * known variables (a typo would reach clients as `{{clinet.name}}`), an SMS-sized body unless it is
 * email-only, a subject only on email-only replies. 422s at the request body's fields.
 */
function validate(fields: Fields): void {
  const issues: ValidationIssue[] = [];
  const unknownIn = (field: 'body' | 'subject', text: string | null) => {
    const unknown = text ? unknownVariables(text) : [];
    if (unknown.length) {
      issues.push({
        loc: ['body', field],
        msg: `unknown variable${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `{{${u}}}`).join(', ')}; the variables are ${TEMPLATE_VARIABLES.join(', ')}`,
        type: 'value_error',
      });
    }
  };
  unknownIn('body', fields.body);
  unknownIn('subject', fields.subject);
  if (fields.channel !== 'email' && fields.body.length > MAX_SAVED_REPLY_SMS_BODY) {
    issues.push({
      loc: ['body', 'body'],
      msg: `must be at most ${MAX_SAVED_REPLY_SMS_BODY} characters unless the channel is email`,
      type: 'too_big',
    });
  }
  if (fields.subject !== null && fields.channel !== 'email') {
    issues.push({ loc: ['body', 'subject'], msg: 'only an email reply (channel email) has a subject', type: 'value_error' });
  }
  if (issues.length) throw new AppError('validation', 'Validation error', { issues });
}

/** A second reply with the same title (ignoring case) is a 422 on `title`, decided by the unique index. */
function refuseDuplicateTitle(err: unknown): never {
  const cause = (err as { cause?: { constraint_name?: string } }).cause ?? (err as { constraint_name?: string });
  if (cause.constraint_name === TITLE_KEY) {
    throw AppError.invalid(['body', 'title'], 'A saved reply with this title already exists in this business');
  }
  throw err;
}

export async function listSavedReplies(businessId: number, q: z.output<typeof SavedReplyListQuery>, tx: Tx = db) {
  const conditions: (SQL | undefined)[] = [eq(savedReplies.businessId, businessId)];
  if (q.search) {
    const like = `%${escapeLike(q.search)}%`;
    conditions.push(or(sql`${savedReplies.title} ilike ${like}`, sql`${savedReplies.body} ilike ${like}`));
  }
  if (q.channel) conditions.push(sql`(${savedReplies.channel} is null or ${savedReplies.channel} = ${q.channel})`);
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    tx
      .select()
      .from(savedReplies)
      .where(where)
      .orderBy(asc(sql`lower(${savedReplies.title})`))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size),
    tx.select({ n: count() }).from(savedReplies).where(where),
  ]);
  return {
    saved_replies: rows.map(toSavedReply),
    total_saved_replies: total!.n,
    page: q.page,
    page_size: q.page_size,
    next_page: q.page * q.page_size < total!.n,
  };
}

async function loadRow(businessId: number, savedReplyId: number, tx: Tx): Promise<Row> {
  const [row] = await tx
    .select()
    .from(savedReplies)
    .where(and(eq(savedReplies.businessId, businessId), eq(savedReplies.id, savedReplyId)));
  if (!row) throw AppError.notFound('Saved reply');
  return row;
}

export async function getSavedReply(businessId: number, savedReplyId: number, tx: Tx = db) {
  return toSavedReply(await loadRow(businessId, savedReplyId, tx));
}

export async function createSavedReply(businessId: number, input: z.output<typeof CreateSavedReplyRequest>, tx: Tx = db) {
  const fields: Fields = { title: input.title, body: input.body, channel: input.channel, subject: input.subject ?? null };
  validate(fields);
  const [row] = await tx
    .insert(savedReplies)
    .values({ businessId, ...fields })
    .returning()
    .catch(refuseDuplicateTitle);
  return toSavedReply(row!);
}

export async function updateSavedReply(
  businessId: number,
  savedReplyId: number,
  patch: z.output<typeof UpdateSavedReplyRequest>,
  tx: Tx = db,
) {
  const stored = await loadRow(businessId, savedReplyId, tx);
  const channel = patch.channel !== undefined ? patch.channel : stored.channel;
  const fields: Fields = {
    title: patch.title ?? stored.title,
    body: patch.body ?? stored.body,
    channel,
    // Leaving email drops the subject: only email replies have one.
    subject: patch.subject !== undefined ? patch.subject : channel === 'email' ? stored.subject : null,
  };
  validate(fields);
  const [row] = await tx
    .update(savedReplies)
    .set({ ...fields, updatedAt: new Date() })
    .where(and(eq(savedReplies.businessId, businessId), eq(savedReplies.id, savedReplyId)))
    .returning()
    .catch(refuseDuplicateTitle);
  if (!row) throw AppError.notFound('Saved reply');
  return toSavedReply(row);
}

export async function deleteSavedReply(businessId: number, savedReplyId: number, tx: Tx = db) {
  const [row] = await tx
    .delete(savedReplies)
    .where(and(eq(savedReplies.businessId, businessId), eq(savedReplies.id, savedReplyId)))
    .returning({ id: savedReplies.id });
  if (!row) throw AppError.notFound('Saved reply');
  return { success: true, saved_reply_id: row.id };
}

/** One use of a saved reply: which reply, for which client (null: a new lead, who has no name yet). */
export type ReplyUse = { savedReplyId: number; clientId: number | null };

export type ResolvedReply = {
  reply: Pick<Row, 'id' | 'title' | 'channel'>;
  body: Resolved;
  /** The resolved subject of an email reply that has one. */
  subject: Resolved | null;
};

/**
 * Resolves saved replies for many recipients at once (a bulk send of up to 1,000 items): the
 * replies, the clients with their locations, the business and the sender in four queries, however
 * many items. Answers in the order of `uses`; a reply this business does not have is null.
 */
export async function resolveSavedReplies(
  businessId: number,
  uses: ReplyUse[],
  staffId: number | null,
  tx: Tx = db,
): Promise<(ResolvedReply | null)[]> {
  if (uses.length === 0) return [];
  const replyIds = [...new Set(uses.map((u) => u.savedReplyId))];
  const clientIds = [...new Set(uses.flatMap((u) => (u.clientId === null ? [] : [u.clientId])))];
  const [replies, recipients, [business], sender] = await Promise.all([
    tx
      .select()
      .from(savedReplies)
      .where(and(eq(savedReplies.businessId, businessId), equalsAny(savedReplies.id, replyIds, 'int'))),
    clientIds.length
      ? tx
          .select({ id: clients.id, name: clients.name, locationName: locations.name, locationPhone: locations.phoneNumber })
          .from(clients)
          .leftJoin(locations, and(eq(locations.businessId, clients.businessId), eq(locations.id, clients.locationId)))
          .where(and(eq(clients.businessId, businessId), equalsAny(clients.id, clientIds, 'int')))
      : [],
    // The business, and its location when it has exactly one: the location of clients without their own.
    tx
      .select({
        name: businesses.name,
        country: businesses.country,
        onlyLocationName: sql<string | null>`(
          select case when count(*) = 1 then min(l.name) end from ${locations} l where l.business_id = ${businessId})`,
        onlyLocationPhone: sql<string | null>`(
          select case when count(*) = 1 then min(l.phone_number) end from ${locations} l where l.business_id = ${businessId})`,
      })
      .from(businesses)
      .where(eq(businesses.id, businessId)),
    staffId === null
      ? []
      : tx
          .select({ name: staff.name })
          .from(staff)
          .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId))),
  ]);
  if (!business) throw AppError.notFound('Business');
  const replyById = new Map(replies.map((r) => [r.id, r]));
  const clientById = new Map(recipients.map((c) => [c.id, c]));
  const phone = (p: string | null | undefined) => (p ? displayPhone(p, business.country) : null);

  return uses.map(({ savedReplyId, clientId }) => {
    const reply = replyById.get(savedReplyId);
    if (!reply) return null;
    const client = clientId === null ? undefined : clientById.get(clientId);
    const location = client?.locationName
      ? { name: client.locationName, phone: client.locationPhone }
      : { name: business.onlyLocationName, phone: business.onlyLocationPhone };
    const context: TemplateContext = {
      'client.first_name': firstName(client?.name),
      'client.name': client?.name,
      'location.name': location?.name,
      'location.phone': phone(location?.phone),
      'staff.first_name': firstName(sender[0]?.name),
      'business.name': business.name,
    };
    return {
      reply: { id: reply.id, title: reply.title, channel: reply.channel },
      body: resolveTemplate(reply.body, context),
      subject: reply.subject === null ? null : resolveTemplate(reply.subject, context),
    };
  });
}

/** One saved reply for many clients (docs/api.md#saved-replies); a reply this business does not have is a 404. */
export async function resolveForRecipients(
  businessId: number,
  savedReplyId: number,
  recipients: { clientId: number | null }[],
  staffId: number | null = null,
  tx: Tx = db,
): Promise<ResolvedReply[]> {
  const resolved = await resolveSavedReplies(
    businessId,
    recipients.map((r) => ({ savedReplyId, clientId: r.clientId })),
    staffId,
    tx,
  );
  if (resolved.some((r) => r === null)) throw AppError.notFound('Saved reply');
  return resolved as ResolvedReply[];
}
