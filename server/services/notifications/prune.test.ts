import { inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { notificationDigests, notificationEvents, notifications } from '@/db/schema';
import { runMaintenance } from '@/server/services/maintenance';
import { endpointSwitchedOff } from '@/server/testing/notifications';
import { createBusiness, createStaff } from '@/server/testing/factories';

const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

describe('pruning notifications', () => {
  it('deletes read notifications and digests older than 90 days and marks past the log, keeps the rest and anything unread', async () => {
    const business = await createBusiness();
    const staff = await createStaff(business.id);
    const row = (readAt: Date | null, createdAt: Date) => ({
      businessId: business.id,
      staffId: staff.id,
      kind: 'webhook_disabled' as const,
      eventId: 1,
      title: 't',
      body: '',
      inApp: true,
      browser: false,
      createdAt,
      updatedAt: createdAt,
      replyAfter: createdAt,
      readAt,
    });
    const written = await db
      .insert(notifications)
      .values([row(daysAgo(91), daysAgo(100)), row(daysAgo(10), daysAgo(100)), row(null, daysAgo(200))])
      .returning({ id: notifications.id });
    const digests = await db
      .insert(notificationDigests)
      .values([
        { businessId: business.id, staffId: staff.id, conversationIds: [1], sentAt: daysAgo(91) },
        { businessId: business.id, staffId: staff.id, conversationIds: [1], sentAt: daysAgo(89) },
      ])
      .returning({ id: notificationDigests.id });

    // The handler's marks: one of an event the log no longer holds, one of the log's oldest.
    await endpointSwitchedOff(business.id, 'x');
    const [{ oldest } = { oldest: 0 }] = await db.execute<{ oldest: number }>(sql`select min(id)::bigint as oldest from events`);
    await db.insert(notificationEvents).values([
      { eventId: Number(oldest) - 1, businessId: business.id },
      { eventId: Number(oldest), businessId: business.id },
    ]);

    const swept = await runMaintenance();
    expect(swept.notifications).toEqual({ notifications: 1, digests: 1, marks: 1 });
    expect((await db.select().from(notificationEvents)).map((m) => m.eventId)).toEqual([Number(oldest)]);
    const left = await db
      .select({ id: notifications.id })
      .from(notifications)
      .where(
        inArray(
          notifications.id,
          written.map((w) => w.id),
        ),
      )
      .orderBy(notifications.id);
    expect(left.map((l) => l.id)).toEqual([written[1]!.id, written[2]!.id]);
    const [{ n } = { n: 0 }] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from notification_digests where id = ${digests[1]!.id}`,
    );
    expect(n).toBe(1);
  });
});
