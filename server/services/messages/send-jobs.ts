import { sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { enqueue } from '@/server/jobs/enqueue';
import { BULK_CHUNK, QUEUES } from '@/server/jobs/queues';

/** A message made `queued` for its attempt number `attempts` (messages.attempts). */
type ToSend = { id: number; businessId: number; channel: 'sms' | 'email'; attempts: number };

/**
 * Enqueues the sending of messages that are `queued` now, inside the caller's transaction, per
 * channel. One message gets a job of its own in sms.send / email.send: a staff member's reply or a
 * single API send never waits behind a campaign. Several get chunk jobs in the bulk queue
 * (BULK_CHUNK messages each, one business per job, in the order given), so a bulk request writes a
 * job per chunk, not per message, and the worker's fetch and completion touch as few jobs.
 */
export async function enqueueSends(messages: ToSend[], tx: Tx): Promise<void> {
  for (const channel of ['sms', 'email'] as const) {
    const ofChannel = messages.filter((m) => m.channel === channel);
    if (ofChannel.length === 1) {
      const [m] = ofChannel;
      await enqueue(tx, channel === 'sms' ? QUEUES.smsSend : QUEUES.emailSend, [
        { data: { messageId: m!.id, businessId: m!.businessId } },
      ]);
    } else if (ofChannel.length > 1) {
      await enqueue(tx, channel === 'sms' ? QUEUES.smsSendBulk : QUEUES.emailSendBulk, chunkJobs(ofChannel, BULK_CHUNK[channel]));
    }
  }
}

/** Chunk jobs of at most `size` messages, one business each, in the order given. */
function chunkJobs(messages: ToSend[], size: number) {
  const byBusiness = new Map<number, ToSend[]>();
  for (const m of messages) {
    const list = byBusiness.get(m.businessId);
    if (list) list.push(m);
    else byBusiness.set(m.businessId, [m]);
  }
  return [...byBusiness].flatMap(([businessId, ms]) =>
    Array.from({ length: Math.ceil(ms.length / size) }, (_, i) => {
      const chunk = ms.slice(i * size, (i + 1) * size);
      return { data: { messageIds: chunk.map((m) => m.id), attempts: chunk.map((m) => m.attempts), businessId } };
    }),
  );
}

/**
 * The ids of the messages a send job will still handle (a job created, waiting for its retry or
 * active, in any send queue), as a subquery: a one-message job's `messageId`, a chunk job's
 * `messageIds`. Only ids that are numbers are read (a stored payload is not trusted: the worker
 * fails a malformed job, but it may wait in the queue until then), so the subquery never fails a
 * cast and never yields null: `id not in (…)` over it stays exact (one null would make the
 * predicate null for every row).
 */
export const liveSendJobMessageIds = sql`
  select (j.data->>'messageId')::bigint from pgboss.job j
  where j.name in (${QUEUES.smsSend}, ${QUEUES.emailSend}, ${QUEUES.smsSendLater}, ${QUEUES.emailSendLater})
    and j.state < 'completed' and j.data->>'messageId' ~ '^[0-9]{1,18}$'
  union all
  select x::bigint from pgboss.job j
  cross join lateral jsonb_array_elements_text(
    case when jsonb_typeof(j.data->'messageIds') = 'array' then j.data->'messageIds' else '[]' end) x
  where j.name in (${QUEUES.smsSendBulk}, ${QUEUES.emailSendBulk}) and j.state < 'completed' and x ~ '^[0-9]{1,18}$'`;
