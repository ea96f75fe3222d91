import { TRPCError } from '@trpc/server';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { staff } from '@/db/schema';
import { issueSession } from '@/server/services/auth';
import { createStaff } from '@/server/testing/factories';
import { getJson, locs, putJson, restTenant } from '@/server/testing/http';
import { holder, lockWaiters, until } from '@/server/testing/locks';
import { staffCaller } from '@/server/testing/trpc';
import { notificationPreferences, setNotificationPreferences } from './preferences';

/**
 * Notification preferences (docs/api.md#notifications) beyond notifications.test.ts's REST round:
 * every refusal at its key (an unknown kind too), the inbox's procedures with REST's answers and
 * checks, a colleague's choices changed only by a manager, and two changes at once both kept.
 */

const bearer = async (businessId: number, staffId: number) => ({
  authorization: `Bearer ${(await issueSession({ kind: 'platform', scope: 'test' }, { business_id: businessId, staff_id: staffId })).token}`,
});

describe('notification preferences', () => {
  it('refuses an unknown kind, a channel its kind does not use and a value not a boolean, each at its own key', async () => {
    const t = await restTenant();
    const path = `${t.base}/staffs/${t.owner.id}/notification-preferences`;
    const bad = await putJson(path, t.key, {
      preferences: { nope: { email: true }, waiting_digest: { in_app: true }, mentioned: { sms: true, email: 'yes' } },
    });
    expect(bad.status).toBe(422);
    expect(
      locs(bad.body)
        .map((l) => l.join('.'))
        .sort(),
    ).toEqual([
      'body.preferences.mentioned',
      'body.preferences.mentioned.email',
      'body.preferences.nope',
      'body.preferences.waiting_digest',
    ]);
    // Nothing changed.
    expect((await getJson(path, t.key)).body.preferences.mentioned.email).toBe(true);
  });

  it('a staff member may change only their own; a manager, a colleague’s', async () => {
    const t = await restTenant();
    const [clerk, colleague, manager] = await Promise.all([
      createStaff(t.business.id, { role: 'staff' }),
      createStaff(t.business.id, { role: 'staff' }),
      createStaff(t.business.id, { role: 'manager' }),
    ]);
    const path = `${t.base}/staffs/${colleague.id}/notification-preferences`;
    const change = { preferences: { assigned: { browser: false } } };
    expect((await putJson(path, await bearer(t.business.id, clerk.id), change)).status).toBe(403);
    expect((await getJson(path, t.key)).body.preferences.assigned.browser).toBe(true);
    expect((await putJson(path, await bearer(t.business.id, manager.id), change)).status).toBe(200);
    expect((await getJson(path, t.key)).body.preferences.assigned.browser).toBe(false);
  });

  it('in the inbox: one’s own, REST’s answer and REST’s refusal at the same key', async () => {
    const t = await restTenant();
    const inbox = await staffCaller(t.sessionToken);
    const rest = await getJson(`${t.base}/staffs/${t.owner.id}/notification-preferences`, t.key);
    expect(await inbox.inbox.notificationPreferences()).toEqual(rest.body.preferences);
    const changed = await inbox.inbox.setNotificationPreferences({ preferences: { missed_call: { email: true } } });
    expect(changed.missed_call).toEqual({ in_app: true, browser: true, email: true });
    expect(changed.waiting_digest).toEqual({ email: true });
    const err = await inbox.inbox.setNotificationPreferences({ preferences: { waiting_digest: { browser: true } } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe('UNPROCESSABLE_CONTENT');
    const issues = ((err as TRPCError).cause as unknown as { extra: { issues: { loc: unknown[] }[] } }).extra.issues;
    expect(issues.map((i) => i.loc)).toEqual([['body', 'preferences', 'waiting_digest']]);
  });

  it('two changes at once are both kept', async () => {
    const t = await restTenant();
    const member = await createStaff(t.business.id);
    // A writer in flight holds the staff row: both changes wait for it, then go one after the other.
    const inFlight = holder(sql`select id from staff where id = ${member.id} for no key update`);
    const pid = await inFlight.pid;
    const changes = [
      setNotificationPreferences(t.business.id, member.id, { assigned: { email: false } }),
      setNotificationPreferences(t.business.id, member.id, { mentioned: { browser: false } }),
    ];
    try {
      // One waits for the writer, the other behind it.
      await until('both changes wait for the staff row', async () => {
        const waiting = await lockWaiters('%notification_preferences%');
        return waiting.length === 2 && waiting.some((w) => w.blockers.includes(pid));
      });
    } finally {
      inFlight.release();
    }
    await inFlight.done;
    await Promise.all(changes);
    const now = await notificationPreferences(t.business.id, member.id);
    expect([now.assigned.email, now.mentioned.browser]).toEqual([false, false]);
    const [row] = await db.select({ p: staff.notificationPreferences }).from(staff).where(eq(staff.id, member.id));
    expect(row!.p).toEqual({ assigned: { email: false }, mentioned: { browser: false } });
  });
});
