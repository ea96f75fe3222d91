import { and, asc, count, eq, type SQL } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { messages } from '@/db/schema';
import { AppError } from '@/server/errors';
import { enqueueSends } from './send-jobs';
import { selectMessageItems, toMessageItem } from './serialize';
import { startNewAttempt } from './lifecycle';
import { isStatusIn, RETRYABLE_STATUSES } from '@/server/shared/message-statuses';
import { setEventActor } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';

/**
 * `GET /messages/{business_id}/requests/{request_id}` (businessId set) and the platform-wide
 * `GET /messages/requests/{request_id}` (businessId null): the request's messages in the order they
 * were created (message id; a re-queued older message keeps its place), with a status summary over
 * the whole request.
 */
export async function getRequestMessages(
  businessId: number | null,
  requestId: string,
  page: number,
  pageSize: number,
  tx: Tx = db,
) {
  const where = and(eq(messages.requestId, requestId), businessId === null ? undefined : eq(messages.businessId, businessId));
  const summaryRows = await tx
    .select({ status: messages.status, n: count() })
    .from(messages)
    .where(where)
    .groupBy(messages.status);
  const total = summaryRows.reduce((sum, r) => sum + r.n, 0);
  if (total === 0) throw AppError.notFound('Request');
  const rows = await selectMessageItems(tx)
    .where(where)
    .orderBy(asc(messages.id))
    .limit(pageSize)
    .offset((page - 1) * pageSize);
  return {
    request_id: requestId,
    messages: rows.map(toMessageItem),
    total_messages: total,
    page,
    page_size: pageSize,
    next_page: page * pageSize < total,
    summary: Object.fromEntries(summaryRows.map((r) => [r.status, r.n])),
  };
}

/**
 * docs/api.md#retry: outbound `failed`/`undelivered` texts and emails go back to `queued` (error
 * cleared, attempts + 1) with a new job; anything else is listed in `skipped` with the reason.
 * One conditional UPDATE decides, so a message is never queued twice by concurrent retries.
 */
export async function retryMessages(
  businessId: number,
  selector: { messageIds: number[] } | { requestId: string },
  actor: EventActor,
  tx: Tx = db,
) {
  const where: SQL | undefined =
    'messageIds' in selector
      ? and(eq(messages.businessId, businessId), equalsAny(messages.id, selector.messageIds, 'bigint'))
      : and(eq(messages.businessId, businessId), eq(messages.requestId, selector.requestId));
  const found = await tx
    .select({ id: messages.id, status: messages.status, direction: messages.direction, messageType: messages.messageType })
    .from(messages)
    .where(where)
    .orderBy(asc(messages.id));
  if ('messageIds' in selector) {
    const present = new Set(found.map((m) => m.id));
    const issues = selector.messageIds.flatMap((id, i) =>
      present.has(id)
        ? []
        : [
            {
              loc: ['body', 'message_ids', i] as ['body', string, number],
              msg: `Message ${id} not found in this business`,
              type: 'value_error',
            },
          ],
    );
    if (issues.length) throw new AppError('validation', 'Validation error', { issues });
  } else if (found.length === 0) {
    throw AppError.notFound('Request');
  }

  const skipped: { message_id: number; reason: string }[] = [];
  const candidates: number[] = [];
  for (const m of found) {
    if (m.messageType === 'NOTE' || m.messageType === 'CALL')
      skipped.push({ message_id: m.id, reason: `${m.messageType === 'NOTE' ? 'notes' : 'calls'} are not sent` });
    else if (m.direction !== 'outbound') skipped.push({ message_id: m.id, reason: 'inbound messages are not sent' });
    else if (!isStatusIn(RETRYABLE_STATUSES, m.status))
      skipped.push({ message_id: m.id, reason: `status is ${m.status}; only failed or undelivered messages are retried` });
    else candidates.push(m.id);
  }

  const requeued = await tx.transaction(async (tx) => {
    await setEventActor(actor, tx);
    if (candidates.length === 0) return [];
    const rows = await startNewAttempt(businessId, candidates, RETRYABLE_STATUSES, undefined, tx);
    await enqueueSends(
      rows.flatMap((r) =>
        r.channel === 'sms' || r.channel === 'email' ? [{ id: r.id, businessId, channel: r.channel, attempts: r.attempts }] : [],
      ),
      tx,
    );
    return rows.map((r) => r.id);
  });
  for (const id of candidates)
    if (!requeued.includes(id)) skipped.push({ message_id: id, reason: 'status changed meanwhile; not retried' });

  return {
    success: true,
    updated: requeued.length,
    message: `${requeued.length} message(s) re-queued, ${skipped.length} skipped`,
    message_ids: requeued,
    skipped: skipped.sort((a, b) => a.message_id - b.message_id),
  };
}
