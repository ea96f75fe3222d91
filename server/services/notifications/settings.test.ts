import { describe, expect, it } from 'vitest';
import { createStaff } from '@/server/testing/factories';
import { getJson, locs, putJson, restTenant } from '@/server/testing/http';
import { issueSession } from '@/server/services/auth';
import { staffCaller } from '@/server/testing/trpc';

const PATH = '/notification-settings';

describe('the business’s notification email settings', () => {
  it('over REST: defaults, a change of some fields, bounds as 422 at the field, managers only', async () => {
    const t = await restTenant();
    expect(await getJson(`${t.base}${PATH}`, t.key)).toEqual({
      status: 200,
      body: { notification_email_delay_minutes: 3, waiting_digest_minutes: 60 },
    });
    const set = await putJson(`${t.base}${PATH}`, t.key, { notification_email_delay_minutes: 0 });
    expect(set).toEqual({ status: 200, body: { notification_email_delay_minutes: 0, waiting_digest_minutes: 60 } });
    expect((await putJson(`${t.base}${PATH}`, t.session, { waiting_digest_minutes: null })).body).toEqual({
      notification_email_delay_minutes: 0,
      waiting_digest_minutes: null,
    });
    expect((await putJson(`${t.base}${PATH}`, t.key, { waiting_digest_minutes: 10_080 })).body.waiting_digest_minutes).toBe(
      10_080,
    );

    for (const [body, field] of [
      [{ notification_email_delay_minutes: -1 }, 'notification_email_delay_minutes'],
      [{ notification_email_delay_minutes: 1441 }, 'notification_email_delay_minutes'],
      [{ notification_email_delay_minutes: 2.5 }, 'notification_email_delay_minutes'],
      [{ notification_email_delay_minutes: null }, 'notification_email_delay_minutes'],
      [{ waiting_digest_minutes: 0 }, 'waiting_digest_minutes'],
      [{ waiting_digest_minutes: 10_081 }, 'waiting_digest_minutes'],
      [{ waiting_digest_minutes: '60' }, 'waiting_digest_minutes'],
    ] as const) {
      const res = await putJson(`${t.base}${PATH}`, t.key, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(locs(res.body)).toEqual([['body', field]]);
    }
    // Unchanged by the refusals.
    expect((await getJson(`${t.base}${PATH}`, t.key)).body).toEqual({
      notification_email_delay_minutes: 0,
      waiting_digest_minutes: 10_080,
    });

    // A staff member who is no manager reads but may not change them.
    const clerk = await createStaff(t.business.id, { role: 'staff' });
    const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: clerk.id });
    const asClerk = { authorization: `Bearer ${session.token}` };
    expect((await getJson(`${t.base}${PATH}`, asClerk)).status).toBe(200);
    expect((await putJson(`${t.base}${PATH}`, asClerk, { notification_email_delay_minutes: 5 })).status).toBe(403);
  });

  it('over tRPC: the same contract and rule', async () => {
    const t = await restTenant();
    const trpc = await staffCaller(t.sessionToken);
    expect(await trpc.inbox.notificationEmailSettings()).toEqual({
      notification_email_delay_minutes: 3,
      waiting_digest_minutes: 60,
    });
    expect(
      await trpc.inbox.setNotificationEmailSettings({ notification_email_delay_minutes: 1440, waiting_digest_minutes: 1 }),
    ).toEqual({
      notification_email_delay_minutes: 1440,
      waiting_digest_minutes: 1,
    });
    await expect(trpc.inbox.setNotificationEmailSettings({ notification_email_delay_minutes: 1441 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(trpc.inbox.setNotificationEmailSettings({ waiting_digest_minutes: 0 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    const clerk = await createStaff(t.business.id, { role: 'staff' });
    const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: clerk.id });
    const asClerk = await staffCaller(session.token);
    expect((await asClerk.inbox.notificationEmailSettings()).waiting_digest_minutes).toBe(1);
    await expect(asClerk.inbox.setNotificationEmailSettings({ waiting_digest_minutes: null })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
