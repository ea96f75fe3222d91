import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { upsertAppointment } from '@/server/services/appointments';
import {
  createClient,
  createConversation,
  createLocation,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * The client panel's Appointments card (docs/api.md#appointments): the client's upcoming and
 * recent appointments with their reminders, and confirm / cancel by staff — logged with the staff
 * member as the actor, only in the staff member's business.
 */

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

const api = { type: 'api' } as const;
const HOUR = 3_600_000;

async function setup() {
  const t = await createTenant();
  await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { name: 'Ana Lima' });
  const conv = await createConversation(t.business.id, client.id);
  const appointment = (externalId: string, inHours: number, extra: Record<string, unknown> = {}) =>
    upsertAppointment(
      t.business.id,
      externalId,
      {
        client_id: client.id,
        starts_at: new Date(Date.now() + inHours * HOUR),
        ends_at: new Date(Date.now() + (inHours + 1) * HOUR),
        ...extra,
      } as never,
      api,
    ).then((r) => r.appointment);
  return { t, client, conv, appointment, trpc: await callerFor(t.sessionToken) };
}

const events = (businessId: number) =>
  db.execute<{ type: string; actor_type: string; actor_staff_id: number | null; data: Record<string, unknown> }>(
    sql`select type, actor_type, actor_staff_id, data from events
        where business_id = ${businessId} and type in ('appointment.confirmed', 'appointment.canceled') order by id`,
  );

describe('inbox.appointments', () => {
  it('answers the next and the last appointments, with staff, location, its clock and the reminders', async () => {
    const { t, conv, appointment, trpc } = await setup();
    const location = await createLocation(t.business.id, { name: 'Main St', timezone: 'America/Chicago' });
    const maya = await createStaff(t.business.id, { name: 'Maya Ortiz' });
    const soon = await appointment('a-soon', 72, { service: 'Haircut', staff_id: maya.id, location_id: location.id });
    const later = await appointment('a-later', 24 * 9);
    const past = await appointment('a-past', -48, { status: 'completed' });
    const older = await appointment('a-older', -24 * 10);
    // Another client's appointment is not theirs.
    const other = await createClient(t.business.id);
    await upsertAppointment(
      t.business.id,
      'other',
      { client_id: other.id, starts_at: new Date(Date.now() + HOUR * 5), ends_at: new Date(Date.now() + HOUR * 6) } as never,
      api,
    );

    const card = await trpc.inbox.appointments({ conversationId: conv.id });
    expect(card.upcoming.map((a) => a.appointment_id)).toEqual([soon.appointment_id, later.appointment_id]);
    expect(card.recent.map((a) => a.appointment_id)).toEqual([past.appointment_id, older.appointment_id]);
    expect(card.upcoming[0]).toMatchObject({
      status: 'booked',
      service: 'Haircut',
      staff_name: 'Maya Ortiz',
      location_name: 'Main St',
      time_zone: 'America/Chicago',
    });
    expect(card.upcoming[1]).toMatchObject({ location_name: null, time_zone: t.business.timezone, staff_name: null });
    expect(card.recent[0]!.status).toBe('completed');
    // The default rules: two days before (asking) and two hours before, both scheduled.
    expect(card.upcoming[0]!.reminders.map((r) => [r.before, r.asks_confirmation, r.status])).toEqual([
      ['P2D', true, 'scheduled'],
      ['PT2H', false, 'scheduled'],
    ]);
    expect(card.upcoming[0]!.reminders[0]!.at).toBe(new Date(Date.parse(soon.starts_at) - 48 * HOUR).toISOString());
  });

  it('shows the next five and the last five', async () => {
    const { conv, appointment, trpc } = await setup();
    const ahead = [];
    const past = [];
    for (let i = 1; i <= 6; i++) {
      ahead.push(await appointment(`ahead-${i}`, 24 * i));
      past.push(await appointment(`past-${i}`, -24 * i));
    }
    const card = await trpc.inbox.appointments({ conversationId: conv.id });
    expect(card.upcoming.map((a) => a.appointment_id)).toEqual(ahead.slice(0, 5).map((a) => a.appointment_id));
    expect(card.recent.map((a) => a.appointment_id)).toEqual(past.slice(0, 5).map((a) => a.appointment_id));
  });

  it('confirms and cancels as the staff member: events with the staff actor, reminders in line', async () => {
    const { t, conv, appointment, trpc } = await setup();
    const a = await appointment('c1', 72, { service: 'Color' });

    const confirmed = await trpc.inbox.confirmAppointment({ appointmentId: a.appointment_id });
    expect(confirmed).toMatchObject({ changed: true, appointment: { status: 'confirmed' } });
    // Confirming again changes nothing and logs nothing.
    expect((await trpc.inbox.confirmAppointment({ appointmentId: a.appointment_id })).changed).toBe(false);
    let card = await trpc.inbox.appointments({ conversationId: conv.id });
    expect(card.upcoming[0]!.reminders.map((r) => [r.asks_confirmation, r.status])).toEqual([
      [true, 'canceled'],
      [false, 'scheduled'],
    ]);

    const canceled = await trpc.inbox.cancelAppointment({ appointmentId: a.appointment_id });
    expect(canceled).toMatchObject({ changed: true, appointment: { status: 'canceled' } });
    card = await trpc.inbox.appointments({ conversationId: conv.id });
    expect(card.upcoming[0]!.status).toBe('canceled');
    expect(card.upcoming[0]!.reminders.every((r) => r.status === 'canceled')).toBe(true);

    const logged = await events(t.business.id);
    expect(logged.map((e) => [e.type, e.actor_type, e.actor_staff_id])).toEqual([
      ['appointment.confirmed', 'staff', t.owner.id],
      ['appointment.canceled', 'staff', t.owner.id],
    ]);
    expect(logged[0]!.data).toMatchObject({ appointment_id: a.appointment_id, previous_status: 'booked', message_id: null });
  });

  it('another business’s appointment or conversation is NOT_FOUND, and nothing is logged', async () => {
    const mine = await setup();
    const theirs = await setup();
    const a = await theirs.appointment('x1', 72);
    await expect(mine.trpc.inbox.confirmAppointment({ appointmentId: a.appointment_id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(mine.trpc.inbox.cancelAppointment({ appointmentId: a.appointment_id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(mine.trpc.inbox.appointments({ conversationId: theirs.conv.id })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(await events(theirs.t.business.id)).toEqual([]);
    const card = await theirs.trpc.inbox.appointments({ conversationId: theirs.conv.id });
    expect(card.upcoming[0]!.status).toBe('booked');
  });
});
