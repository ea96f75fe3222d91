import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { env } from '@/server/env';
import { postWebhook } from '@/server/lib/public-post';
import { logger } from '@/server/logger';
import { recordEvents, type NewEvent } from '@/server/services/events/record';
import { createStaff, createTenant } from '@/server/testing/factories';
import { issueSession } from '@/server/services/auth';
import { api, jsonOf } from '@/server/testing/http';
import { RETRY_DELAYS_SECONDS } from '@/server/shared/outgoing-webhooks';
import { PER_ENDPOINT, PREFETCH, senderPolicy, startOutgoingWebhooks } from '@/workers/outgoing-webhooks';
import { createWebhookEndpoint } from './endpoints';
import { CHAIN_LENGTH, claimStatement, extendLeases, LEASE_SECONDS, pruneWebhookDeliveries, retryDelaySeconds } from './deliver';

/**
 * Outgoing webhooks end to end (docs/api.md#webhooks-you-receive-from-us): endpoints managed over
 * the real REST routes, events written to the real log, the worker's real dispatcher and sender
 * POSTing over HTTP to a local receiver, which verifies every delivery with the `standardwebhooks`
 * package as a platform would.
 */
process.env.WEBHOOK_ALLOW_PRIVATE_URLS = 'true'; // the receiver is on 127.0.0.1

type Received = { path: string; headers: http.IncomingHttpHeaders; body: string; at: number };
type Answer = { status: number; headers?: Record<string, string>; hang?: boolean };

/** A local receiver: records every request, answers what `answer` says for it. */
async function startReceiver(answer: (r: Received) => Answer = () => ({ status: 200 })) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      received.push(r);
      const a = answer(r);
      if (a.hang) return;
      res.writeHead(a.status, a.headers).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/hooks`,
    origin,
    received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let worker: ReturnType<typeof startOutgoingWebhooks>;
beforeAll(() => {
  // The worker's own policy, but attempts time out after 5 s here (15 s in production), so a
  // hanging receiver is quick to test.
  const policy = senderPolicy({ allowPrivate: true, timeoutMs: 5_000 });
  worker = startOutgoingWebhooks(env(), logger, (url, body, headers) => postWebhook(url, body, headers, policy));
});
afterAll(async () => {
  await worker.stop();
});

const key = (t: { apiKey: string }) => ({ 'X-API-KEY': t.apiKey });

async function createEndpoint(t: Awaited<ReturnType<typeof createTenant>>, body: Record<string, unknown>) {
  const res = await api.post(`/api/v1/businesses/${t.business.id}/webhook-endpoints`, { headers: key(t), body });
  expect(res.status).toBe(201);
  return jsonOf(res);
}

const deliveries = (endpointId: number) =>
  db.execute<{
    id: number;
    status: string;
    attempts: number;
    event_type: string;
    next_attempt_at: Date;
    last_status_code: number;
  }>(
    sql`select id, status, attempts, event_type, next_attempt_at, last_status_code from webhook_deliveries
        where endpoint_id = ${endpointId} order by id`,
  );

/** One sample of each event type's data, as the log's writers would record it. */
function sample(type: EventType, businessId: number, conversationId: number): NewEvent {
  const message = {
    message_id: 9001,
    conversation_id: conversationId,
    client_id: 7,
    channel: 'sms' as const,
    message_type: 'TEXT' as const,
    direction: 'outbound' as const,
    status: 'delivered' as const,
  };
  const call = { ...message, message_type: 'CALL' as const, channel: 'voice' as const, direction: 'inbound' as const };
  const appointment = {
    appointment_id: 11,
    external_id: 'apt-77',
    client_id: 7,
    location_id: null,
    staff_id: 3,
    starts_at: '2026-12-02T15:00:00.000Z',
    ends_at: '2026-12-02T16:00:00.000Z',
    status: 'booked',
  };
  const data: Record<EventType, unknown> = {
    'message.received': { ...message, direction: 'inbound', status: 'received' },
    'message.created': { ...message, status: 'queued', send_at: null },
    'message.status_updated': { ...message, previous_status: 'sent', error_code: null, error_message: null },
    'message.flagged': { ...message, flagged: true },
    'message.rescheduled': {
      ...message,
      status: 'scheduled',
      send_at: '2026-12-01T09:00:00.000Z',
      previous_send_at: '2026-11-30T09:00:00.000Z',
    },
    'message.edited': { ...message, status: 'scheduled' },
    'conversation.created': { conversation_id: conversationId, client_id: 7 },
    'conversation.assigned': { conversation_id: conversationId, staff_id: 3, previous_staff_id: null, by: 'manual' },
    'conversation.status_changed': { conversation_id: conversationId, status: 'resolved', previous_status: 'open' },
    'conversation.snoozed': { conversation_id: conversationId, snoozed_until: '2026-12-01T09:00:00.000Z' },
    'conversation.woke': { conversation_id: conversationId },
    'conversation.labeled': { conversation_id: conversationId, label: 'VIP', previous_label: null },
    'conversation.read': { conversation_id: conversationId, is_read: true, message_count: 2, unread_count: 0 },
    'note.created': { conversation_id: conversationId, message_id: 9002, staff_id: 3, mentioned_staff_ids: [4] },
    'client.updated': { client_id: 7, fields: ['name'] },
    'client.opted_out': { channel: 'sms', address: '+14155550100', source: 'keyword', note: null, client_ids: [7] },
    'client.opted_in': { channel: 'sms', address: '+14155550100', source: 'keyword', note: null, client_ids: [7] },
    'consent.recorded': {
      client_id: 7,
      channel: 'sms',
      purpose: 'marketing',
      status: 'given',
      source: 'web_form',
      recorded_at: '2026-11-27T10:00:00.000Z',
    },
    'call.started': { ...call, status: 'ringing', duration_seconds: null },
    'call.completed': { ...call, status: 'completed', duration_seconds: 42 },
    'voicemail.received': { ...call, status: 'completed', duration_seconds: 12 },
    'staff.availability_changed': { staff_id: 3, away: true },
    'webhook_endpoint.disabled': { endpoint_id: 1, reason: 'The endpoint answered 410 Gone' },
    'appointment.created': appointment,
    'appointment.updated': {
      ...appointment,
      fields: ['starts_at', 'ends_at'],
      previous_starts_at: '2026-12-01T14:00:00.000Z',
      previous_status: 'booked',
    },
    'appointment.confirmed': { ...appointment, status: 'confirmed', previous_status: 'booked', message_id: 9003 },
    'appointment.reschedule_requested': { ...appointment, previous_status: 'booked', message_id: 9003 },
    'appointment.cancel_requested': { ...appointment, previous_status: 'booked', message_id: null },
    'appointment.canceled': { ...appointment, status: 'canceled', previous_status: 'booked', message_id: null },
  };
  const inConversation =
    !type.startsWith('client.') &&
    !type.startsWith('consent.') &&
    !type.startsWith('webhook_endpoint.') &&
    !type.startsWith('staff.');
  return {
    type,
    businessId,
    conversationId: inConversation ? conversationId : null,
    actor: { type: 'staff', staff_id: 3 },
    data: data[type],
  } as NewEvent;
}

describe('managing endpoints over REST', () => {
  it('creates with a secret shown once, lists, updates and deletes; refuses staff without the role and other businesses', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const created = await createEndpoint(t, { url: 'https://hooks.example.com/in', event_types: ['message.received'] });
    expect(created).toMatchObject({
      business_id: t.business.id,
      url: 'https://hooks.example.com/in',
      event_types: ['message.received'],
      enabled: true,
      description: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const base = `/api/v1/businesses/${t.business.id}/webhook-endpoints`;
    const list = await jsonOf(await api.get(base, { headers: key(t) }));
    expect(list.webhook_endpoints).toHaveLength(1);
    expect(list.webhook_endpoints[0].secret).toBeUndefined();

    const patched = await api.patch(`${base}/${created.id}`, {
      headers: key(t),
      body: { event_types: null, description: 'CRM', enabled: false },
    });
    expect(await jsonOf(patched)).toMatchObject({ event_types: null, description: 'CRM', enabled: false });

    // Bad input: 422 at the field, nothing written.
    const bad = await api.post(base, { headers: key(t), body: { url: 'not a url', event_types: ['message.nope'] } });
    expect(bad.status).toBe(422);
    const locs = (await jsonOf(bad)).detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.event_types.0']));
    const badUrl = await api.post(base, { headers: key(t), body: { url: 'ftp://hooks.example.com/in' } });
    expect(badUrl.status).toBe(422);
    expect((await jsonOf(badUrl)).detail[0].loc).toEqual(['body', 'url']);

    // Roles: an owner's or a manager's session may; plain staff may not.
    const manager = await createStaff(t.business.id, { role: 'manager' });
    const clerk = await createStaff(t.business.id, { role: 'staff' });
    const sessionOf = async (staffId: number) =>
      (await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: staffId })).token;
    const asManager = await api.get(base, { headers: { Authorization: `Bearer ${await sessionOf(manager.id)}` } });
    expect(asManager.status).toBe(200);
    const asClerk = await api.get(base, { headers: { Authorization: `Bearer ${await sessionOf(clerk.id)}` } });
    expect(asClerk.status).toBe(403);
    const clerkCreates = await api.post(base, {
      headers: { Authorization: `Bearer ${await sessionOf(clerk.id)}` },
      body: { url: 'https://x.example.com/' },
    });
    expect(clerkCreates.status).toBe(403);

    // Another business's endpoint is not found, whatever the operation.
    const theirs = `/api/v1/businesses/${other.business.id}/webhook-endpoints/${created.id}`;
    expect((await api.get(theirs, { headers: key(other) })).status).toBe(404);
    expect((await api.patch(theirs, { headers: key(other), body: { enabled: true } })).status).toBe(404);
    expect((await api.post(`${theirs}/rotate-secret`, { headers: key(other) })).status).toBe(404);
    expect((await api.get(`${theirs}/deliveries`, { headers: key(other) })).status).toBe(404);
    expect((await api.delete(theirs, { headers: key(other) })).status).toBe(404);
    // …and their key cannot reach this business at all.
    expect((await api.get(base, { headers: key(other) })).status).toBe(403);

    // At most 20 endpoints per business: the 21st is a 409 and is not stored.
    for (let i = 1; i < 20; i++) await createEndpoint(t, { url: `https://hooks.example.com/${i}` });
    const past = await api.post(base, { headers: key(t), body: { url: 'https://hooks.example.com/21' } });
    expect(past.status).toBe(409);
    expect((await jsonOf(await api.get(base, { headers: key(t) }))).webhook_endpoints).toHaveLength(20);
    await db.execute(sql`delete from webhook_endpoints where business_id = ${t.business.id} and id <> ${created.id}`);

    const deleted = await api.delete(`${base}/${created.id}`, { headers: key(t) });
    expect(await jsonOf(deleted)).toEqual({ success: true, endpoint_id: created.id });
    expect((await api.get(`${base}/${created.id}`, { headers: key(t) })).status).toBe(404);
  });
});

describe('deliveries', () => {
  it('every event type, signed so that standardwebhooks verifies it, numbered per conversation, filtered by type', async () => {
    const t = await createTenant();
    const receiver = await startReceiver();
    const other = await startReceiver();
    try {
      const all = await createEndpoint(t, { url: receiver.url });
      const some = await createEndpoint(t, { url: other.url, event_types: ['message.received', 'conversation.assigned'] });
      await recordEvents(EVENT_TYPES.map((type) => sample(type, t.business.id, 4242)));
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(EVENT_TYPES.length);
      await expect.poll(() => other.received.length, { timeout: 10_000 }).toBe(2);

      const verifier = new Webhook(all.secret);
      const bodies = receiver.received.map(
        (r) =>
          verifier.verify(r.body, r.headers as Record<string, string>) as {
            type: string;
            timestamp: string;
            data: Record<string, unknown>;
          },
      );
      expect(bodies.map((b) => b.type).sort()).toEqual([...EVENT_TYPES].sort());
      for (const b of bodies) {
        expect(b.data.business_id).toBe(t.business.id);
        expect(b.data.actor).toEqual({ type: 'staff', staff_id: 3 });
      }
      // The conversation's events are numbered 1… in the log's order, and arrive in it.
      const inConversation = bodies.filter((b) => b.data.sequence !== undefined);
      expect(inConversation.map((b) => b.data.sequence)).toEqual(inConversation.map((_, i) => i + 1));
      // A wrong secret fails verification: the signature is really checked.
      expect(() => new Webhook(some.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as never)).toThrow();
      expect(other.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(['conversation.assigned', 'message.received']);
      // webhook-id is the event's id.
      const [first] = await db.execute<{ id: number }>(
        sql`select id from events where business_id = ${t.business.id} and type = 'message.received'`,
      );
      const got = other.received.find((r) => JSON.parse(r.body).type === 'message.received')!;
      expect(got.headers['webhook-id']).toBe(String(first!.id));
      // Recorded as delivered, once each (the outcome is written just after the receiver answered).
      await expect
        .poll(async () => (await deliveries(all.id)).every((d) => d.status === 'delivered' && d.attempts === 1), {
          timeout: 5_000,
        })
        .toBe(true);
    } finally {
      await receiver.close();
      await other.close();
    }
  });

  it('retries on the schedule, honouring Retry-After; one conversation in order while another goes on; catches up after an outage', async () => {
    const t = await createTenant();
    let failing = true;
    const receiver = await startReceiver((r) =>
      failing && JSON.parse(r.body).data.conversation_id === 1
        ? { status: 503, headers: { 'Retry-After': '600' } }
        : { status: 200 },
    );
    try {
      const endpoint = await createEndpoint(t, { url: receiver.url, event_types: ['conversation.assigned'] });
      const assigned = (conversationId: number, staffId: number): NewEvent => ({
        type: 'conversation.assigned',
        businessId: t.business.id,
        conversationId,
        actor: { type: 'api' },
        data: { conversation_id: conversationId, staff_id: staffId, previous_staff_id: null, by: 'manual' },
      });
      await recordEvents([assigned(1, 11), assigned(2, 21), assigned(1, 12), assigned(2, 22)]);
      // Conversation 2 is delivered in order; conversation 1's first event failed and holds its second.
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(3);
      await expect.poll(async () => (await deliveries(endpoint.id))[0]!.attempts, { timeout: 5_000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 300)); // nothing more comes
      const seen = receiver.received.map((r) => JSON.parse(r.body).data);
      expect(seen.filter((d) => d.conversation_id === 2).map((d) => d.staff_id)).toEqual([21, 22]);
      expect(seen.filter((d) => d.conversation_id === 1).map((d) => d.staff_id)).toEqual([11]);
      const [held, , second] = await deliveries(endpoint.id);
      expect(held).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });
      // Retry-After 600 s is longer than the first scheduled wait (5 s): it wins.
      const wait = (new Date(held!.next_attempt_at).getTime() - Date.now()) / 1000;
      expect(wait).toBeGreaterThan(590);
      expect(wait).toBeLessThanOrEqual(600);
      expect(second).toMatchObject({ status: 'pending', attempts: 0 });

      // The receiver is back after an outage (every attempt failed for a minute): its first success
      // makes what waits due at once, not in ten minutes; they go in order, with the same webhook-id.
      failing = false;
      const firstId = receiver.received[0]!.headers['webhook-id'];
      await db.execute(sql`update webhook_endpoints set failing_since = now() - interval '1 minute' where id = ${endpoint.id}`);
      await recordEvents([assigned(3, 31)]);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(6);
      const tail = receiver.received.slice(3).map((r) => JSON.parse(r.body).data);
      expect(tail.map((d) => d.staff_id)).toEqual([31, 11, 12]);
      expect(receiver.received[4]!.headers['webhook-id']).toBe(firstId);
      await expect
        .poll(async () => (await deliveries(endpoint.id)).every((d) => d.status === 'delivered'), { timeout: 5_000 })
        .toBe(true);
      const [endpointNow] = await db.execute<{ failing_since: Date | null }>(
        sql`select failing_since from webhook_endpoints where id = ${endpoint.id}`,
      );
      expect(endpointNow!.failing_since).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('a conversation’s queued events go one after the other in one claim, up to the first that fails; those behind it wait for it, not for their lease', async () => {
    const t = await createTenant();
    let failThird = true;
    const receiver = await startReceiver((r) => {
      const staffId = JSON.parse(r.body).data.staff_id;
      if (staffId === 3 && failThird) {
        failThird = false;
        return { status: 500 };
      }
      return { status: 200 };
    });
    try {
      const endpoint = await createEndpoint(t, { url: receiver.url, event_types: ['conversation.assigned'] });
      // More than a chain's length, all pending at once in one conversation (its own id: sequences
      // are numbered per conversation id, and other tests use small made-up ones).
      const count = CHAIN_LENGTH + 5;
      const conversationId = 1_000_000 + t.business.id;
      await recordEvents(
        Array.from({ length: count }, (_, i): NewEvent => ({
          type: 'conversation.assigned',
          businessId: t.business.id,
          conversationId,
          actor: { type: 'api' },
          data: { conversation_id: conversationId, staff_id: i + 1, previous_staff_id: null, by: 'manual' },
        })),
      );
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(3);
      await new Promise((r) => setTimeout(r, 300)); // nothing more comes
      expect(receiver.received.map((r) => JSON.parse(r.body).data.staff_id)).toEqual([1, 2, 3]);
      // The failed one waits for its retry; those claimed behind it are due again (not leased for a
      // minute) and wait for it by the conversation's order.
      const rows = await deliveries(endpoint.id);
      expect(rows[2]).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
      await expect
        .poll(async () =>
          (await deliveries(endpoint.id)).slice(3).every((d) => new Date(d.next_attempt_at).getTime() <= Date.now()),
        )
        .toBe(true);
      expect(rows.slice(3).every((d) => d.attempts === 0)).toBe(true);
      // Its retry comes due: the rest follow, in order, once each.
      await db.execute(sql`update webhook_deliveries set next_attempt_at = now() where id = ${rows[2]!.id}`);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(count + 1);
      expect(receiver.received.slice(3).map((r) => JSON.parse(r.body).data.staff_id)).toEqual(
        Array.from({ length: count - 2 }, (_, i) => i + 3),
      );
      expect(receiver.received.slice(3).map((r) => JSON.parse(r.body).data.sequence)).toEqual(
        Array.from({ length: count - 2 }, (_, i) => i + 3),
      );
    } finally {
      await receiver.close();
    }
  });

  it('the schedule: 5 s, 5 min … 24 h; Retry-After is a floor bounded by the longest wait', () => {
    expect(RETRY_DELAYS_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(retryDelaySeconds(1, null)).toBe(5);
    expect(retryDelaySeconds(2, null)).toBe(300);
    expect(retryDelaySeconds(9, null)).toBe(86400);
    expect(retryDelaySeconds(1, 1)).toBe(5);
    expect(retryDelaySeconds(1, 60)).toBe(60);
    expect(retryDelaySeconds(1, 10 * 86400)).toBe(86400);
  });

  it('410 Gone disables the endpoint at once; the last attempt fails a delivery; five days of failures disable', async () => {
    const t = await createTenant();
    const gone = await startReceiver(() => ({ status: 410 }));
    const broken = await startReceiver(() => ({ status: 500 }));
    const watcher = await startReceiver();
    try {
      const a = await createEndpoint(t, { url: gone.url, event_types: ['conversation.woke'] });
      const b = await createEndpoint(t, { url: broken.url, event_types: ['conversation.woke'] });
      const w = await createEndpoint(t, { url: watcher.url, event_types: ['webhook_endpoint.disabled'] });
      const woke = (n: number): NewEvent => ({
        type: 'conversation.woke',
        businessId: t.business.id,
        conversationId: n,
        actor: { type: 'system' },
        data: { conversation_id: n },
      });
      await recordEvents([woke(1), woke(2)]);
      await expect
        .poll(
          async () =>
            (await jsonOf(await api.get(`/api/v1/businesses/${t.business.id}/webhook-endpoints/${a.id}`, { headers: key(t) })))
              .enabled,
          { timeout: 10_000 },
        )
        .toBe(false);
      const endpointA = await jsonOf(
        await api.get(`/api/v1/businesses/${t.business.id}/webhook-endpoints/${a.id}`, { headers: key(t) }),
      );
      expect(endpointA.disabled_reason).toBe('The endpoint answered 410 Gone');
      await expect
        .poll(async () => (await deliveries(a.id)).map((d) => d.status), { timeout: 10_000 })
        .toEqual(['failed', 'failed']);
      // The business's other endpoint hears of it.
      await expect.poll(() => watcher.received.length, { timeout: 10_000 }).toBe(1);
      expect(JSON.parse(watcher.received[0]!.body)).toMatchObject({
        type: 'webhook_endpoint.disabled',
        data: { endpoint_id: a.id, reason: 'The endpoint answered 410 Gone' },
      });

      // b: 500s. Its deliveries wait for retries; the endpoint's failing run has started.
      await expect.poll(async () => (await deliveries(b.id)).map((d) => d.attempts), { timeout: 10_000 }).toEqual([1, 1]);
      const [first] = await deliveries(b.id);
      // The last attempt: failed for good (redeliverable).
      await db.execute(sql`update webhook_deliveries set attempts = 9, next_attempt_at = now() where id = ${first!.id}`);
      worker.wake();
      await expect.poll(async () => (await deliveries(b.id))[0]!.status, { timeout: 10_000 }).toBe('failed');
      expect((await deliveries(b.id))[0]!.attempts).toBe(10);
      // Failing for more than five days: the next failure disables it.
      await db.execute(sql`update webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = ${b.id}`);
      await db.execute(
        sql`update webhook_deliveries set next_attempt_at = now() where endpoint_id = ${b.id} and status = 'pending'`,
      );
      worker.wake();
      await expect
        .poll(
          async () =>
            (await jsonOf(await api.get(`/api/v1/businesses/${t.business.id}/webhook-endpoints/${b.id}`, { headers: key(t) })))
              .disabled_reason,
          { timeout: 10_000 },
        )
        .toBe('Every delivery failed for 5 days');
      // Re-enabled, a failed delivery can be redelivered.
      const base = `/api/v1/businesses/${t.business.id}/webhook-endpoints/${b.id}`;
      expect((await api.post(`${base}/deliveries/${first!.id}/redeliver`, { headers: key(t) })).status).toBe(409);
      await api.patch(base, { headers: key(t), body: { enabled: true } });
      const redelivered = await jsonOf(await api.post(`${base}/deliveries/${first!.id}/redeliver`, { headers: key(t) }));
      expect(redelivered).toMatchObject({ status: 'pending', attempts: 0 });
      const failedOnly = await jsonOf(await api.get(`${base}/deliveries?outcome=failed`, { headers: key(t) }));
      expect(failedOnly.deliveries.every((d: { status: string }) => d.status === 'failed')).toBe(true);
      void w;
    } finally {
      await gone.close();
      await broken.close();
      await watcher.close();
    }
  });

  it('a hanging endpoint holds only its own share, even beside another of its host; rotation signs with both secrets for a day; test events', async () => {
    const t = await createTenant();
    // One host, two endpoints (a platform's two paths): they share the worker's connections to it.
    const host = await startReceiver((r) => (r.path === '/slow' ? { status: 200, hang: true } : { status: 200 }));
    const of = (path: string) => ({
      get received() {
        return host.received.filter((r) => r.path === path);
      },
    });
    const hanging = of('/slow');
    const healthy = of('/fast');
    try {
      const slow = await createEndpoint(t, { url: `${host.origin}/slow`, event_types: ['conversation.woke'] });
      const fast = await createEndpoint(t, { url: `${host.origin}/fast`, event_types: ['conversation.woke'] });
      const events = Array.from({ length: 100 }, (_, i): NewEvent => ({
        type: 'conversation.woke',
        businessId: t.business.id,
        conversationId: 100 + i,
        actor: { type: 'system' },
        data: { conversation_id: 100 + i },
      }));
      // A few first, then the rest while those hang: the sender claims only what is left of the share.
      await recordEvents(events.slice(0, 10));
      await expect.poll(() => hanging.received.length, { timeout: 10_000 }).toBe(10);
      await recordEvents(events.slice(10));
      // Well within the hanging requests' deadline (5 s here): none of the healthy ones waited for a connection.
      await expect.poll(() => healthy.received.length, { timeout: 3_000 }).toBe(100);
      // Meanwhile the hanging endpoint holds its share of requests, no more, none of them answered yet.
      await expect.poll(() => hanging.received.length).toBe(PER_ENDPOINT);
      await new Promise((r) => setTimeout(r, 1_500)); // the sender's idle pass included
      expect(hanging.received.length).toBe(PER_ENDPOINT);
      // Claimed (leased) no more than that and the sender's own queue behind it (PREFETCH): what it
      // claimed is not sent beyond the share (it would wait in the HTTP agent, holding slots of the
      // worker that other endpoints need).
      const [leased] = await db.execute<{ n: number }>(sql`
        select count(*)::int as n from webhook_deliveries where endpoint_id = ${slow.id} and next_attempt_at > now()`);
      expect(leased!.n).toBe(PER_ENDPOINT + PREFETCH);
      expect((await deliveries(slow.id)).every((d) => d.attempts === 0)).toBe(true);

      const base = `/api/v1/businesses/${t.business.id}/webhook-endpoints/${fast.id}`;
      const rotated = await jsonOf(await api.post(`${base}/rotate-secret`, { headers: key(t) }));
      expect(rotated.secret).not.toBe(fast.secret);
      const test = await api.post(`${base}/test`, { headers: key(t) });
      expect(test.status).toBe(200);
      expect(await jsonOf(test)).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
      await expect.poll(() => healthy.received.length, { timeout: 10_000 }).toBe(101);
      const testDelivery = healthy.received[100]!;
      expect(String(testDelivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
      for (const secret of [fast.secret, rotated.secret]) {
        expect(new Webhook(secret).verify(testDelivery.body, testDelivery.headers as never)).toMatchObject({
          type: 'webhook.test',
          data: { business_id: t.business.id, endpoint_id: fast.id },
        });
      }
      // A day later the old secret no longer signs.
      await db.execute(sql`update webhook_endpoints set previous_secret_expires_at = now() where id = ${fast.id}`);
      await api.post(`${base}/test`, { headers: key(t) });
      await expect.poll(() => healthy.received.length, { timeout: 10_000 }).toBe(102);
      const later = healthy.received[101]!;
      expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(() => new Webhook(fast.secret).verify(later.body, later.headers as never)).toThrow();
      await expect
        .poll(async () => (await deliveries(fast.id)).filter((d) => d.status === 'delivered').length, { timeout: 5_000 })
        .toBe(102);
      const log = await jsonOf(await api.get(`${base}/deliveries?page_size=2`, { headers: key(t) }));
      expect(log.deliveries).toHaveLength(2);
      expect(log.next_page).toBe(true);
      expect(log.deliveries[0]).toMatchObject({ event_type: 'webhook.test', status: 'delivered', last_status_code: 200 });
      expect(JSON.parse(log.deliveries[0].request_body).type).toBe('webhook.test');
    } finally {
      await host.close();
    }
  });
});

describe('which events an endpoint takes', () => {
  it('exactly those that happen from its creation on, even one that commits while the creation is still committing', async () => {
    const t = await createTenant();
    const receiver = await startReceiver();
    const woke = (n: number): NewEvent => ({
      type: 'conversation.woke',
      businessId: t.business.id,
      conversationId: n,
      actor: { type: 'system' },
      data: { conversation_id: n },
    });
    try {
      let endpointId = 0;
      await db.transaction(async (creation) => {
        await creation.execute(sql`select now()`); // the creation has begun
        await new Promise((r) => setTimeout(r, 20));
        await recordEvents([woke(1)]); // begins after it, commits before it
        await new Promise((r) => setTimeout(r, 300)); // the handler has read that event meanwhile
        endpointId = (
          await createWebhookEndpoint(t.business.id, { url: receiver.url, event_types: ['conversation.woke'] }, creation)
        ).id;
      });
      await recordEvents([woke(2)]);
      const expected = await db.execute<{ id: string }>(sql`
        select e.id::text from events e join webhook_endpoints w on w.id = ${endpointId}
        where e.business_id = ${t.business.id} and e.type = 'conversation.woke' and e.occurred_at >= w.created_at order by e.id`);
      expect(expected.length).toBeGreaterThanOrEqual(1);
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(expected.length);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).toEqual(expected.map((e) => e.id).sort());
    } finally {
      await receiver.close();
    }
  });
});

describe('the delivery log', () => {
  it('keeps what the event log keeps: older delivered and failed deliveries go, pending ones stay', async () => {
    const t = await createTenant();
    const endpoint = await createEndpoint(t, { url: 'https://hooks.example.com/kept', event_types: ['conversation.woke'] });
    const insert = (status: string, daysAgo: number) =>
      db.execute<{ id: number }>(sql`
        insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, payload, status, created_at, next_attempt_at)
        values (${t.business.id}, ${endpoint.id}, nextval('events_id_seq'), 'conversation.woke', '{}'::jsonb, ${status},
                now() - make_interval(days => ${daysAgo}), now() + interval '1 day')
        returning id`);
    const [oldDelivered] = await insert('delivered', 31);
    const [oldFailed] = await insert('failed', 31);
    const [oldPending] = await insert('pending', 31);
    const [recent] = await insert('delivered', 29);
    expect(await pruneWebhookDeliveries(30)).toBeGreaterThanOrEqual(2);
    const left = (await deliveries(endpoint.id)).map((d) => d.id);
    expect(left).toEqual([oldPending!.id, recent!.id]);
    expect(left).not.toContain(oldDelivered!.id);
    expect(left).not.toContain(oldFailed!.id);
  });
});

describe('leases', () => {
  it('a lease still held is renewed; a retry scheduled further out is left alone', async () => {
    const t = await createTenant();
    const endpoint = await createEndpoint(t, { url: 'https://hooks.example.com/leases', event_types: ['conversation.woke'] });
    const insert = (secondsAhead: number) =>
      db.execute<{ id: number }>(sql`
        insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, payload, next_attempt_at)
        values (${t.business.id}, ${endpoint.id}, nextval('events_id_seq'), 'conversation.woke', '{}'::jsonb,
                now() + make_interval(secs => ${secondsAhead}))
        returning id`);
    const [leased] = await insert(5); // a lease about to run out
    const [retry] = await insert(300); // the second attempt, 5 minutes away
    await extendLeases([leased!.id, retry!.id]);
    const rows = await db.execute<{ id: number; ahead: number }>(sql`
      select id, extract(epoch from next_attempt_at - now())::float as ahead from webhook_deliveries
      where id in (${leased!.id}, ${retry!.id}) order by id`);
    expect(rows[0]!.ahead).toBeGreaterThan(LEASE_SECONDS - 5);
    expect(rows[1]!.ahead).toBeGreaterThan(290);
    expect(rows[1]!.ahead).toBeLessThanOrEqual(300);
    // Not left for the worker to try against a real host name.
    await db.execute(sql`delete from webhook_endpoints where id = ${endpoint.id}`);
  });
});

describe('the sender’s queue', () => {
  // It stops the file's worker and runs one of its own: the tests after it need none.
  it('claims PREFETCH chains beyond an endpoint’s share, starts them as requests finish, and gives back at once what it did not start when it stops', async () => {
    await worker.stop();
    const t = await createTenant();
    const answers: ((status: number) => void)[] = [];
    const posted: string[] = [];
    // A receiver whose answers the test gives, one by one.
    const own = startOutgoingWebhooks(env(), logger, (_url, body) => {
      posted.push(body);
      return new Promise((resolve) => answers.push((status) => resolve({ ok: true, status, durationMs: 1 })));
    });
    worker = own;
    const endpoint = await createEndpoint(t, { url: 'https://hooks.example.com/queue', event_types: ['conversation.woke'] });
    await recordEvents(
      Array.from({ length: 100 }, (_, i): NewEvent => ({
        type: 'conversation.woke',
        businessId: t.business.id,
        conversationId: 500 + i,
        actor: { type: 'system' },
        data: { conversation_id: 500 + i },
      })),
    );
    const leased = async () =>
      (
        await db.execute<{ n: number }>(sql`
          select count(*)::int as n from webhook_deliveries
          where endpoint_id = ${endpoint.id} and status = 'pending' and next_attempt_at > now()`)
      )[0]!.n;
    await expect.poll(() => posted.length, { timeout: 10_000 }).toBe(PER_ENDPOINT);
    await expect.poll(leased, { timeout: 5_000 }).toBe(PER_ENDPOINT + PREFETCH);
    // Eight answers: the next eight queued go at once, and the queue is filled again by a claim.
    for (const answer of answers.splice(0, 8)) answer(200);
    await expect.poll(() => posted.length, { timeout: 5_000 }).toBe(PER_ENDPOINT + 8);
    await expect.poll(leased, { timeout: 5_000 }).toBe(PER_ENDPOINT + PREFETCH);
    // Stopping: what is in flight is answered and recorded, what is queued goes back due now.
    const stopped = own.stop();
    await new Promise((r) => setTimeout(r, 200));
    for (const answer of answers.splice(0)) answer(200);
    await stopped;
    const rows = await deliveries(endpoint.id);
    expect(rows.filter((d) => d.status === 'delivered')).toHaveLength(PER_ENDPOINT + 8);
    const waiting = rows.filter((d) => d.status === 'pending');
    expect(waiting).toHaveLength(100 - PER_ENDPOINT - 8);
    expect(waiting.every((d) => d.attempts === 0 && new Date(d.next_attempt_at).getTime() <= Date.now())).toBe(true);
    expect(posted).toHaveLength(PER_ENDPOINT + 8);
  });
});

describe('the claim’s plan', () => {
  /** Each scan of webhook_deliveries in the claim's plan: its alias and the index it reads (none: a sequential scan). */
  async function scans(tx: Tx = db): Promise<{ alias: string; index: string | null }[]> {
    const [row] = await tx.execute<{ 'QUERY PLAN': unknown }>(
      sql`explain (format json) ${claimStatement(256, PER_ENDPOINT + PREFETCH, new Map([[1, 3]]))}`,
    );
    const found: { alias: string; index: string | null }[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'webhook_deliveries')
        found.push({ alias: String(node['Alias']), index: (node['Index Name'] as string | undefined) ?? null });
      for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk((row!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
    return found;
  }

  it('looks up one conversation’s pending deliveries by the conversation index, whatever the statistics say', async () => {
    const t = await createTenant();
    const endpoint = await createEndpoint(t, { url: 'https://hooks.example.com/plan', event_types: ['conversation.woke'] });
    const check = async () => {
      const found = await scans();
      // The lookups of one conversation (before the head, after it, between): never an endpoint-wide index.
      const lookups = found.filter((s) => ['p', 'f', 'q'].includes(s.alias));
      expect(lookups.map((s) => s.alias).sort()).toEqual(['f', 'p', 'q']);
      expect(
        lookups.every((s) => s.index === 'webhook_deliveries_pending_conversation_idx'),
        JSON.stringify(found),
      ).toBe(true);
    };
    // Statistics of a table where nothing is pending (a quiet hour; many delivered, kept for the log)…
    await db.execute(sql`
      insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, conversation_id, payload, status, attempts)
      select ${t.business.id}, ${endpoint.id}, nextval('events_id_seq'), 'conversation.woke', 10000 + i % 500, '{}'::jsonb, 'delivered', 1
      from generate_series(1, 5000) i`);
    await db.execute(sql`analyze webhook_deliveries`);
    await check();
    // …then a burst of pending ones the statistics do not know of yet.
    await db.execute(sql`
      insert into webhook_deliveries (business_id, endpoint_id, event_id, event_type, conversation_id, payload, next_attempt_at)
      select ${t.business.id}, ${endpoint.id}, nextval('events_id_seq'), 'conversation.woke', 20000 + i, '{}'::jsonb, now() + interval '1 hour'
      from generate_series(1, 2000) i`);
    await check();
    // Whatever the costs: even without the conversation index, no lookup of one conversation can
    // take the endpoint-wide pending index (the plan the benchmark's log showed, 2–7 s a claim).
    const rollback = new Error('rollback');
    await db
      .transaction(async (tx) => {
        await tx.execute(sql`drop index webhook_deliveries_pending_conversation_idx`);
        const found = await scans(tx);
        const lookups = found.filter((s) => ['p', 'f', 'q'].includes(s.alias));
        expect(lookups).toHaveLength(3);
        expect(
          lookups.some((s) => s.index === 'webhook_deliveries_pending_idx'),
          JSON.stringify(found),
        ).toBe(false);
        // The endpoint-wide scans still take it.
        expect(found.some((s) => s.index === 'webhook_deliveries_pending_idx')).toBe(true);
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    await db.execute(sql`delete from webhook_endpoints where id = ${endpoint.id}`);
  });
});
