import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { webhookReceiverPerFile } from '@/server/testing/webhook-receiver';
import { createClient, createSmsNumber } from '@/server/testing/factories';
import { deleteJson, postJson, putJson, restTenant } from '@/server/testing/http';
import { confirmAppointment } from './outcomes';

/**
 * docs/api.md#events: an appointment's changes reach the platform through the outgoing webhooks,
 * signed, in the order they happened, with the client's conversation's `sequence`.
 */
const { received, url: receiverUrl } = webhookReceiverPerFile();

describe('appointment events through outgoing webhooks', () => {
  it('delivers created, updated, confirmed and canceled, signed and in order', async () => {
    const t = await restTenant();
    await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const url = receiverUrl('/hooks');
    const endpoint = await postJson(`${t.base}/webhook-endpoints`, t.key, {
      url,
      event_types: ['appointment.created', 'appointment.updated', 'appointment.confirmed', 'appointment.canceled'],
    });
    expect(endpoint.status).toBe(201);
    const startsAt = Date.now() + 3 * 86_400_000;
    const body = {
      client_id: client.id,
      starts_at: new Date(startsAt).toISOString(),
      ends_at: new Date(startsAt + 3_600_000).toISOString(),
    };
    const created = await putJson(`${t.base}/appointments/w1`, t.key, body);
    await putJson(`${t.base}/appointments/w1`, t.key, { ...body, service: 'Haircut' });
    await confirmAppointment(t.business.id, created.body.appointment_id, { actor: { type: 'client' } });
    await deleteJson(`${t.base}/appointments/w1`, t.key);

    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(4);
    const wh = new Webhook(endpoint.body.secret);
    const events = received.map((r) =>
      wh.verify(r.body, {
        'webhook-id': r.headers['webhook-id'] as string,
        'webhook-timestamp': r.headers['webhook-timestamp'] as string,
        'webhook-signature': r.headers['webhook-signature'] as string,
      }),
    ) as { type: string; data: Record<string, unknown> }[];
    expect(events.map((e) => e.type)).toEqual([
      'appointment.created',
      'appointment.updated',
      'appointment.confirmed',
      'appointment.canceled',
    ]);
    expect(events[0]!.data).toMatchObject({
      business_id: t.business.id,
      appointment_id: created.body.appointment_id,
      external_id: 'w1',
      client_id: client.id,
      status: 'booked',
      actor: { type: 'api' },
    });
    expect(events[1]!.data).toMatchObject({ fields: ['service'], previous_status: 'booked' });
    expect(events[2]!.data).toMatchObject({
      status: 'confirmed',
      previous_status: 'booked',
      message_id: null,
      actor: { type: 'client' },
    });
    expect(events[3]!.data).toMatchObject({ status: 'canceled', previous_status: 'confirmed' });
    // In the client's conversation (opened by the reminders): numbered, one after the other.
    const sequences = events.map((e) => e.data.sequence as number);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(4);
  });
});
