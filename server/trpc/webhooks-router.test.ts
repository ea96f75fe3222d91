import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { staff } from '@/db/schema';
import { db } from '@/server/db/client';
import { issueSession } from '@/server/services/auth';
import { createStaff, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * The webhooks settings page's procedures (docs/api.md#webhooks-you-receive-from-us): owners and
 * managers only, as over REST, and only the caller's business's endpoints and deliveries.
 */
process.env.WEBHOOK_ALLOW_PRIVATE_URLS = 'true'; // the endpoints below are on 127.0.0.1

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

async function sessionOf(businessId: number, role: 'owner' | 'manager' | 'staff') {
  const member = await createStaff(businessId, { role });
  const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: businessId, staff_id: member.id });
  return { member, trpc: await callerFor(session.token) };
}

const URL = 'http://127.0.0.1:9/hooks';

describe('webhook settings over tRPC', () => {
  it('lets an owner and a manager manage the endpoints, test them, read and redeliver their deliveries', async () => {
    const t = await createTenant();
    const owner = await callerFor(t.sessionToken);
    const { trpc: manager } = await sessionOf(t.business.id, 'manager');

    const created = await owner.inbox.createWebhookEndpoint({ url: URL, description: 'Booking app', event_types: null });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created).toMatchObject({ url: URL, description: 'Booking app', event_types: null, enabled: true });
    // The list never carries the secret.
    const listed = await manager.inbox.webhookEndpoints();
    expect(listed.webhook_endpoints.map((e) => e.id)).toEqual([created.id]);
    expect(listed.webhook_endpoints[0]).not.toHaveProperty('secret');

    const updated = await manager.inbox.updateWebhookEndpoint({
      endpointId: created.id,
      event_types: ['message.received', 'client.opted_out'],
    });
    expect(updated.event_types).toEqual(['client.opted_out', 'message.received']);

    const rotated = await manager.inbox.rotateWebhookSecret({ endpointId: created.id });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);

    const first = await owner.inbox.testWebhookEndpoint({ endpointId: created.id });
    const second = await manager.inbox.testWebhookEndpoint({ endpointId: created.id });
    expect(second).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
    const page1 = await manager.inbox.webhookDeliveries({ endpointId: created.id, page_size: 1 });
    expect(page1.deliveries.map((d) => d.id)).toEqual([second.id]);
    expect(page1.next_page).toBe(true);
    const page2 = await manager.inbox.webhookDeliveries({ endpointId: created.id, page: 2, page_size: 1 });
    expect([page2.deliveries.map((d) => d.id), page2.next_page]).toEqual([[first.id], false]);
    expect((await owner.inbox.webhookDeliveries({ endpointId: created.id, outcome: 'delivered' })).deliveries).toEqual([]);
    expect((await owner.inbox.redeliverWebhook({ endpointId: created.id, deliveryId: first.id })).status).toBe('pending');

    // Turned off: no test event until it is on again; then deleted with its log.
    await owner.inbox.updateWebhookEndpoint({ endpointId: created.id, enabled: false });
    await expect(owner.inbox.testWebhookEndpoint({ endpointId: created.id })).rejects.toMatchObject({ code: 'CONFLICT' });
    await owner.inbox.deleteWebhookEndpoint({ endpointId: created.id });
    expect((await owner.inbox.webhookEndpoints()).webhook_endpoints).toEqual([]);
  });

  it('refuses a staff member of the `staff` role every procedure, saying which role it needs, and at once after a demotion', async () => {
    const t = await createTenant();
    const owner = await callerFor(t.sessionToken);
    const endpoint = await owner.inbox.createWebhookEndpoint({ url: URL });
    const delivery = await owner.inbox.testWebhookEndpoint({ endpointId: endpoint.id });
    const { trpc: desk } = await sessionOf(t.business.id, 'staff');
    const { member, trpc: manager } = await sessionOf(t.business.id, 'manager');

    const forbidden = { code: 'FORBIDDEN', message: expect.stringContaining('needs the owner or manager role') };
    const endpointId = endpoint.id;
    const calls = [
      () => desk.inbox.webhookEndpoints(),
      () => desk.inbox.createWebhookEndpoint({ url: URL }),
      () => desk.inbox.updateWebhookEndpoint({ endpointId, enabled: false }),
      () => desk.inbox.deleteWebhookEndpoint({ endpointId }),
      () => desk.inbox.rotateWebhookSecret({ endpointId }),
      () => desk.inbox.testWebhookEndpoint({ endpointId }),
      () => desk.inbox.webhookDeliveries({ endpointId }),
      () => desk.inbox.redeliverWebhook({ endpointId, deliveryId: delivery.id }),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject(forbidden);
    // Nothing the refused calls named changed.
    expect((await owner.inbox.webhookEndpoints()).webhook_endpoints).toMatchObject([{ id: endpointId, enabled: true }]);
    expect((await owner.inbox.webhookDeliveries({ endpointId })).deliveries.map((d) => d.id)).toEqual([delivery.id]);

    expect((await manager.inbox.webhookEndpoints()).webhook_endpoints).toHaveLength(1);
    await db.update(staff).set({ role: 'staff' }).where(eq(staff.id, member.id));
    await expect(manager.inbox.webhookEndpoints()).rejects.toMatchObject(forbidden);
  });

  it('keeps each business to its own endpoints and deliveries', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const ours = await callerFor(a.sessionToken);
    const theirs = await callerFor(b.sessionToken);
    const endpoint = await ours.inbox.createWebhookEndpoint({ url: URL });
    const delivery = await ours.inbox.testWebhookEndpoint({ endpointId: endpoint.id });
    const endpointId = endpoint.id;

    expect((await theirs.inbox.webhookEndpoints()).webhook_endpoints).toEqual([]);
    const notFound = { code: 'NOT_FOUND' };
    await expect(theirs.inbox.updateWebhookEndpoint({ endpointId, url: 'http://127.0.0.1:9/theirs' })).rejects.toMatchObject(
      notFound,
    );
    await expect(theirs.inbox.rotateWebhookSecret({ endpointId })).rejects.toMatchObject(notFound);
    await expect(theirs.inbox.testWebhookEndpoint({ endpointId })).rejects.toMatchObject(notFound);
    await expect(theirs.inbox.webhookDeliveries({ endpointId })).rejects.toMatchObject(notFound);
    await expect(theirs.inbox.redeliverWebhook({ endpointId, deliveryId: delivery.id })).rejects.toMatchObject(notFound);
    await expect(theirs.inbox.deleteWebhookEndpoint({ endpointId })).rejects.toMatchObject(notFound);
    // Their own endpoint cannot reach our delivery either.
    const own = await theirs.inbox.createWebhookEndpoint({ url: URL });
    await expect(theirs.inbox.redeliverWebhook({ endpointId: own.id, deliveryId: delivery.id })).rejects.toMatchObject(notFound);
    expect((await ours.inbox.webhookEndpoints()).webhook_endpoints).toMatchObject([{ id: endpointId, url: URL }]);
  });

  it('names the field of a bad address, as the form shows it', async () => {
    const t = await createTenant();
    const owner = await callerFor(t.sessionToken);
    await expect(owner.inbox.createWebhookEndpoint({ url: 'ftp://example.com/hooks' })).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      cause: { extra: { issues: [{ loc: ['body', 'url'] }] } },
    });
  });
});
