import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { SENDABLE_ORIGINS } from '@/db/schema';
import { env } from '@/server/env';
import { enqueueSends, liveSendJobMessageIds } from './messages/send-jobs';
import type { Logger } from '@/server/logger';
import { EVENT_LEASE_SECONDS } from './webhooks/events';
import { reprocessEvent } from './webhooks/retry';

/**
 * The worker's recovery sweeps: what a crash, a lost job or a database outage can leave half done
 * is found here and finished, so nothing accepted is ever left behind.
 */

// The thresholds are settings (RECOVERY_ORPHANED_SEND_SECONDS, RECOVERY_EVENT_MAX_ATTEMPTS), so the
// fuzzer and the system test can run the sweep within their time.
// Arbitrary application-wide advisory lock key: one worker sweeps sends at a time.
const SEND_SWEEP_LOCK = 7_310_013;

/**
 * Webhook events stored but not processed: their processor died between storing and processing,
 * or the database failed under it and the retry job could not be enqueued. Any event still
 * `pending`/`failed` whose claim has lapsed is processed again (claimed first, so never twice at
 * once). Returns how many were tried.
 */
export async function sweepUnprocessedEvents(log: Logger, limit = 100, tx: Tx = db): Promise<number> {
  const maxAttempts = env().recoveryEventMaxAttempts;
  const stale = await tx.execute<{ id: number; attempts: number }>(sql`
    select id, attempts from webhook_events
    where outcome in ('pending', 'failed')
      and received_at < now() - make_interval(secs => ${EVENT_LEASE_SECONDS})
      and received_at > now() - interval '7 days'
      and (processing_until is null or processing_until < now())
      and attempts < ${maxAttempts}
    order by received_at
    limit ${limit}`);
  for (const event of stale) {
    try {
      await reprocessEvent(event.id, event.attempts + 1 >= maxAttempts, tx);
    } catch (err) {
      log.warn({ event_id: event.id, err: { message: (err as Error).message } }, 'swept webhook event still fails');
    }
  }
  return stale.length;
}

/**
 * Messages in flight (`queued`, `sending`) that no send job will ever touch again: the job's last
 * attempt was held by a worker that died (pg-boss expired it and gave up), or it was otherwise
 * lost. Only messages the product queued itself (SENDABLE_ORIGINS): a recorded message in flight
 * mirrors another system's send and is never ours to send (docs/api.md#record-mode). Each gets a new send job; the send handler re-reads the message, so a `sending` one is
 * reconciled with the provider (SMS) or failed safe for review (email) before anything is resent.
 * One worker sweeps at a time (an advisory lock), and the check and the enqueue share a
 * transaction, so a message never gets two live jobs from here.
 */
export async function requeueOrphanedSends(
  log: Logger,
  olderThanSeconds = env().recoveryOrphanedSendSeconds,
  tx: Tx = db,
): Promise<number> {
  return tx.transaction(async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${SEND_SWEEP_LOCK}) as locked`);
    if (!lock?.locked) return 0;
    // `not in` over the live jobs is hashed: one pass over them, whatever the backlog.
    const orphans = await tx.execute<{ id: number; business_id: number; channel: 'sms' | 'email'; attempts: number }>(sql`
      select m.id, m.business_id, m.channel, m.attempts from messages m
      where m.status in ('queued', 'sending') and m.status_updated_at < now() - make_interval(secs => ${olderThanSeconds})
        and m.direction = 'outbound' and m.channel in ('sms', 'email') and m.origin = any(${sql.param([...SENDABLE_ORIGINS])}::text[])
        and m.id not in (${liveSendJobMessageIds})
      order by m.status_updated_at
      limit 500`);
    if (orphans.length === 0) return 0;
    await enqueueSends(
      orphans.map((m) => ({ id: m.id, businessId: m.business_id, channel: m.channel, attempts: m.attempts })),
      tx,
    );
    log.warn({ message_ids: orphans.map((m) => m.id) }, 'messages in flight without a send job; re-enqueued');
    return orphans.length;
  });
}
