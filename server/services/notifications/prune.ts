import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';

/**
 * Notifications' history kept (docs/api.md#email-notifications-and-the-waiting-digest): read
 * notifications and sent digests are deleted once this many days old, by the maintenance job
 * (server/services/maintenance.ts), in batches. Unread notifications stay until read. The handler's
 * marks of the events it took (notification_events) go once the log holds the event no more: older
 * than its oldest event, it can never be handed over again.
 */
export const NOTIFICATION_RETENTION_DAYS = 90;
const PRUNE_BATCH = 1000;

async function inBatches(statement: () => Promise<{ count: number }>, maxBatches: number): Promise<number> {
  let pruned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const { count } = await statement();
    pruned += count;
    if (count < PRUNE_BATCH) break;
  }
  return pruned;
}

/** Read notifications (read more than `days` ago), digests (sent more than `days` ago) and marks past the log, at most `maxBatches` batches of each. */
export async function pruneNotifications(days = NOTIFICATION_RETENTION_DAYS, maxBatches = 20, tx: Tx = db) {
  const notifications = await inBatches(
    () =>
      tx.execute(sql`
        delete from notifications where id in (
          select id from notifications where read_at is not null and read_at < now() - make_interval(days => ${days})
          order by read_at limit ${PRUNE_BATCH})`),
    maxBatches,
  );
  const digests = await inBatches(
    () =>
      tx.execute(sql`
        delete from notification_digests where id in (
          select id from notification_digests where sent_at < now() - make_interval(days => ${days})
          order by sent_at limit ${PRUNE_BATCH})`),
    maxBatches,
  );
  const [oldest] = await tx.execute<{ id: number | null }>(sql`select min(id) as id from events`);
  const marks =
    oldest?.id == null
      ? 0
      : await inBatches(
          () =>
            tx.execute(sql`
              delete from notification_events where event_id in (
                select event_id from notification_events where event_id < ${oldest.id}
                order by event_id limit ${PRUNE_BATCH})`),
          maxBatches,
        );
  return { notifications, digests, marks };
}
