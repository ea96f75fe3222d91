import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { logger } from '@/server/logger';
import { cancelScheduledMessage } from '@/server/services/messages/schedule';
import { createClient, createLocation, createSmsNumber, createStaff } from '@/server/testing/factories';
import { cancelScheduledOnReply } from '@/server/services/messages/lifecycle';
import { createSavedReply } from '@/server/services/saved-replies';
import { getJson, locs, putJson, restTenant } from '@/server/testing/http';
import { wallClock, zonedInstant } from '@/server/shared/zoned-time';
import { clientAppointments } from './client-card';
import { confirmAppointment, openConfirmationReminder, requestCancel, requestReschedule } from './outcomes';
import { getAppointment, listAppointments } from './read';
import { setBusinessReminderRules, setLocationReminderRules } from './rules';
import { upsertAppointment } from './upsert';

/**
 * docs/api.md#reminders: reminders as scheduled texts linked to their appointment — written at the
 * rules' times, moved with the appointment, canceled with it (and the asking ones on confirmation),
 * never for a time past, held by quiet hours, never to an opted-out number, never twice for one
 * rule and time. The clock is the services' `now`, set by each test.
 */

const NY = 'America/New_York';
const api = { type: 'api' } as const;

/** An instant `days` from today at HH:MM on New York's clock. */
function nyAt(days: number, hour: number, minute = 0) {
  const today = wallClock(NY, new Date(Date.now() + days * 86_400_000));
  return zonedInstant(NY, today.year, today.month, today.day, hour, minute);
}

async function setup(window: { start: number; end: number } = { start: 0, end: 1440 }) {
  const t = await restTenant();
  await db.execute(
    sql`update businesses set sending_window_start = ${window.start}, sending_window_end = ${window.end}, timezone = ${NY} where id = ${t.business.id}`,
  );
  await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { name: 'Ana Lima', timezone: NY });
  return { t, b: t.business.id, client };
}

type Reminder = {
  message_id: number;
  status: string;
  send_at: Date;
  content: string;
  error_code: string | null;
  cancel_on_reply: boolean;
  sender_type: string;
  category: string;
  notification_type: string;
  hold_reason: string | null;
  provider_metadata: Record<string, unknown>;
  before_seconds: number;
  asks_confirmation: boolean;
  active: boolean;
};

const reminders = async (b: number, appointmentId: number) =>
  (
    await db.execute<Reminder>(sql`
      select m.id as message_id, m.status, m.send_at, m.content, m.error_code, m.cancel_on_reply, m.sender_type, m.category,
             m.notification_type, m.hold_reason, m.provider_metadata, r.before_seconds, r.asks_confirmation, r.active
      from appointment_reminders r join messages m on m.id = r.message_id
      where r.business_id = ${b} and r.appointment_id = ${appointmentId} order by m.id`)
  ).map((r) => ({ ...r, message_id: Number(r.message_id), send_at: new Date(r.send_at) }));

const put = (b: number, id: string, body: Record<string, unknown>, now = new Date()) =>
  upsertAppointment(b, id, body as never, api, now);

describe('reminders', () => {
  it('schedules the default rules as system texts that keep scheduled on a reply, with the time on the location’s clock', async () => {
    const { b, client } = await setup();
    const location = await createLocation(b, { name: 'Downtown', timezone: 'America/Los_Angeles' });
    const startsAt = nyAt(3, 14);
    const { appointment } = await put(b, 'a1', {
      client_id: client.id,
      location_id: location.id,
      starts_at: startsAt,
      ends_at: new Date(startsAt.getTime() + 3_600_000),
    });
    const rows = await reminders(b, appointment.appointment_id);
    expect(rows.map((r) => [r.status, r.send_at.getTime(), r.asks_confirmation])).toEqual([
      ['scheduled', startsAt.getTime() - 2 * 86_400_000, true],
      ['scheduled', startsAt.getTime() - 2 * 3_600_000, false],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({ cancel_on_reply: false, sender_type: 'system', category: 'reminder', hold_reason: null });
    }
    expect(rows[0]!.notification_type).toBe('appointment_confirmation');
    expect(rows[1]!.notification_type).toBe('appointment_reminder');
    // Each names its appointment and rule, and is in the timeline like any scheduled text.
    expect(rows.map((r) => r.provider_metadata)).toEqual(
      ['P2D', 'PT2H'].map((before) => ({
        appointment_id: appointment.appointment_id,
        appointment_external_id: 'a1',
        reminder_before: before,
      })),
    );
    const created = await db.execute<{ message_id: number }>(
      sql`select message_id from events where business_id = ${b} and type = 'message.created' order by id`,
    );
    expect(created.map((e) => Number(e.message_id))).toEqual(rows.map((r) => r.message_id));
    // 14:00 in New York is 11:00 in Los Angeles, the location's clock.
    expect(rows[0]!.content).toMatch(
      /^Studio \d+: reminder of your appointment on \w+day, \w+ \d+ 11:00 AM\. Reply C to confirm, R to reschedule\.$/,
    );
    expect(rows[1]!.content).toMatch(/see you at .* 11:00 AM at Downtown\.$/);
    expect(appointment.reminders).toHaveLength(2);
    // Each with its send job after its time; a client's reply in the conversation cancels neither.
    for (const r of rows) {
      const jobs = await db.execute<{ start_after: Date }>(
        sql`select start_after from pgboss.job where name = 'sms.send.later' and (data->>'messageId')::bigint = ${r.message_id}`,
      );
      expect(jobs.map((j) => new Date(j.start_after).getTime())).toEqual([r.send_at.getTime()]);
    }
    const [conversation] = await db.execute<{ conversation_id: number }>(
      sql`select conversation_id from messages where id = ${rows[0]!.message_id}`,
    );
    expect(await cancelScheduledOnReply(b, conversation!.conversation_id, db)).toEqual([]);
    // The same upsert again writes no second reminder.
    await put(b, 'a1', {
      client_id: client.id,
      location_id: location.id,
      starts_at: startsAt,
      ends_at: new Date(startsAt.getTime() + 3_600_000),
    });
    expect(await reminders(b, appointment.appointment_id)).toHaveLength(2);
  });

  it('moves with the appointment (pending ones canceled, new ones written) and is canceled with it', async () => {
    const { b, client } = await setup();
    const first = nyAt(3, 10);
    const { appointment } = await put(b, 'a2', { client_id: client.id, starts_at: first, ends_at: nyAt(3, 11) });
    const id = appointment.appointment_id;
    const second = nyAt(5, 16);
    await put(b, 'a2', { client_id: client.id, starts_at: second, ends_at: nyAt(5, 17) });
    let rows = await reminders(b, id);
    expect(rows.map((r) => [r.status, r.error_code, r.active])).toEqual([
      ['canceled', 'appointment_moved', false],
      ['canceled', 'appointment_moved', false],
      ['scheduled', null, true],
      ['scheduled', null, true],
    ]);
    expect(rows.slice(2).map((r) => r.send_at.getTime())).toEqual([
      second.getTime() - 2 * 86_400_000,
      second.getTime() - 7_200_000,
    ]);
    // Back to the first time: written again (the first ones never went).
    await put(b, 'a2', { client_id: client.id, starts_at: first, ends_at: nyAt(3, 11) });
    expect((await reminders(b, id)).filter((r) => r.status === 'scheduled')).toHaveLength(2);
    // A change of words (the service) writes them again; notes alone do not.
    await put(b, 'a2', { client_id: client.id, starts_at: first, ends_at: nyAt(3, 11), notes: 'x' });
    expect(await reminders(b, id)).toHaveLength(6);
    await put(b, 'a2', { client_id: client.id, starts_at: first, ends_at: nyAt(3, 11), service: 'Color' });
    expect(await reminders(b, id)).toHaveLength(8);

    await put(b, 'a2', { client_id: client.id, starts_at: first, ends_at: nyAt(3, 11), status: 'canceled' });
    rows = await reminders(b, id);
    expect(rows.filter((r) => r.status === 'scheduled')).toEqual([]);
    expect(rows.slice(-2).map((r) => r.error_code)).toEqual(['appointment_canceled', 'appointment_canceled']);
    // Each cancel is a status change on the log, by the API.
    const [logged] = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from events where business_id = ${b} and type = 'message.status_updated'
        and data->>'status' = 'canceled' and actor_type = 'api'`);
    expect(logged!.n).toBe(8); // moved, moved back, new words, canceled: two each
  });

  it('lists at most 20 reminders with the appointment: those pending or gone first, then the latest canceled', async () => {
    const { b, client } = await setup();
    const { appointment } = await put(b, 'many', { client_id: client.id, starts_at: nyAt(20, 10), ends_at: nyAt(20, 11) });
    const id = appointment.appointment_id;
    // The first two-day reminder went; then the appointment moves eleven times (two canceled, two written each).
    const [went] = await reminders(b, id);
    await db.execute(sql`update messages set status = 'sent' where id = ${went!.message_id}`);
    for (let i = 1; i <= 11; i++)
      await put(b, 'many', { client_id: client.id, starts_at: nyAt(20 + i, 10), ends_at: nyAt(20 + i, 11) });
    const all = await reminders(b, id);
    expect(all).toHaveLength(24);

    const read = await getAppointment(b, 'many');
    const listed = read.reminders.map((r) => r.message_id);
    expect(listed).toHaveLength(20); // docs/api.md#appointments: at most 20
    expect(read.reminders_truncated).toBe(true);
    expect(listed).toEqual([...listed].sort((x, y) => x - y)); // oldest first
    const kept = all.filter((r) => r.active).map((r) => r.message_id);
    expect(kept).toHaveLength(3); // the one that went, the two pending
    expect(listed).toEqual(expect.arrayContaining(kept));
    // Those left out are the oldest canceled ones.
    const left = all.filter((r) => !listed.includes(r.message_id));
    expect(left.every((r) => r.status === 'canceled')).toBe(true);
    const oldestListedCanceled = Math.min(...listed.filter((m) => !kept.includes(m)));
    expect(left.every((r) => r.message_id < oldestListedCanceled)).toBe(true);

    // The same in the list, and on the inbox's card.
    const page = await listAppointments(b, { page: 1, page_size: 25 } as never);
    expect(page.appointments[0]!.reminders.map((r) => r.message_id)).toEqual(listed);
    const card = await clientAppointments(b, client.id, new Date());
    expect(card.upcoming[0]!.reminders.map((r) => r.message_id)).toEqual(listed);
    // A short list is whole.
    const few = await put(b, 'few', { client_id: client.id, starts_at: nyAt(5, 10), ends_at: nyAt(5, 11) });
    expect(few.appointment).toMatchObject({ reminders_truncated: false });
    expect(few.appointment.reminders).toHaveLength(2);
  });

  it('writes none for a time already past, and never twice for a reminder that went', async () => {
    const { b, client } = await setup();
    const startsAt = nyAt(1, 15);
    const { appointment } = await put(b, 'a3', { client_id: client.id, starts_at: startsAt, ends_at: nyAt(1, 16) });
    let rows = await reminders(b, appointment.appointment_id);
    expect(rows.map((r) => r.before_seconds)).toEqual([7200]);
    // It went; the platform upserts the appointment again with other fields: not written again.
    await db.execute(sql`update messages set status = 'sent' where id = ${rows[0]!.message_id}`);
    await put(b, 'a3', { client_id: client.id, starts_at: startsAt, ends_at: nyAt(1, 17) });
    rows = await reminders(b, appointment.appointment_id);
    expect(rows.map((r) => r.status)).toEqual(['sent']);
    // More than a year ahead: none yet.
    const far = await put(b, 'a5', { client_id: client.id, starts_at: nyAt(400, 12), ends_at: nyAt(400, 13) });
    expect(await reminders(b, far.appointment.appointment_id)).toEqual([]);
    // With a clock past both moments, none at all.
    const late = await put(
      b,
      'a4',
      { client_id: client.id, starts_at: startsAt, ends_at: nyAt(1, 16) },
      new Date(startsAt.getTime() - 3_600_000),
    );
    expect(await reminders(b, late.appointment.appointment_id)).toEqual([]);
  });

  it('keeps to quiet hours: held until the window opens, not written when that is past the start', async () => {
    const { b, client } = await setup({ start: 8 * 60, end: 21 * 60 });
    await setBusinessReminderRules(b, [{ before: 'PT2H', text: 'See you at {appointment_time}', asks_confirmation: false }]);
    const nine = nyAt(3, 9);
    const held = await put(b, 'q1', { client_id: client.id, starts_at: nine, ends_at: nyAt(3, 10) });
    const [row] = await reminders(b, held.appointment.appointment_id);
    expect(row).toMatchObject({ status: 'scheduled', hold_reason: 'quiet_hours' });
    expect(row!.send_at.getTime()).toBe(nyAt(3, 8).getTime());
    const early = await put(b, 'q2', { client_id: client.id, starts_at: nyAt(3, 7, 30), ends_at: nyAt(3, 8, 30) });
    expect(await reminders(b, early.appointment.appointment_id)).toEqual([]);
  });

  it('sends none to an opted-out number', async () => {
    const { b } = await setup();
    const out = await createClient(b, { optedOutSms: true });
    const { appointment } = await put(b, 'o1', { client_id: out.id, starts_at: nyAt(3, 12), ends_at: nyAt(3, 13) });
    expect(await reminders(b, appointment.appointment_id)).toEqual([]);
  });

  it('a client without a phone number gets none, by no channel; a business without a number to send from, none; both stored', async () => {
    const info = vi.spyOn(logger, 'info');
    const skipped = (appointmentId: number) =>
      info.mock.calls
        .filter(
          ([fields, message]) =>
            message === 'appointment reminder not scheduled' &&
            (fields as { appointment_id: number }).appointment_id === appointmentId,
        )
        .map(([fields]) => (fields as { reason: string }).reason);
    try {
      const { t, b } = await setup();
      const none = await createClient(b, { phoneNumber: null, email: 'no-phone@example.test' });
      const { created, appointment } = await put(b, 'o2', { client_id: none.id, starts_at: nyAt(3, 12), ends_at: nyAt(3, 13) });
      expect(created).toBe(true);
      expect(appointment.reminders).toEqual([]);
      const [written] = await db.execute<{ n: number }>(
        sql`select count(*)::int as n from messages where business_id = ${b} and client_id = ${none.id}`,
      );
      expect(written!.n).toBe(0);
      expect(skipped(appointment.appointment_id)).toEqual(['the client has no phone number', 'the client has no phone number']);
      expect((await getJson(`${t.base}/appointments/o2`, t.key)).body.client_id).toBe(none.id);

      const bare = await restTenant(); // no SMS number
      const client = await createClient(bare.business.id);
      const stored = await put(bare.business.id, 'o3', { client_id: client.id, starts_at: nyAt(3, 12), ends_at: nyAt(3, 13) });
      expect(stored).toMatchObject({ created: true, appointment: { reminders: [] } });
      expect(skipped(stored.appointment.appointment_id)).toEqual([
        expect.stringMatching(/^not sendable: /),
        expect.stringMatching(/^not sendable: /),
      ]);
      expect((await getJson(`${bare.base}/appointments/o3`, bare.key)).status).toBe(200);
    } finally {
      info.mockRestore();
    }
  });

  it('completed and no-show cancel the pending reminders; a canceled appointment booked again gets them again', async () => {
    const { b, client } = await setup();
    const at = { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) };
    for (const [id, status] of [
      ['done', 'completed'],
      ['away', 'no_show'],
    ] as const) {
      const { appointment } = await put(b, id, at);
      expect(await reminders(b, appointment.appointment_id)).toHaveLength(2);
      await put(b, id, { ...at, status });
      expect((await reminders(b, appointment.appointment_id)).map((r) => [r.status, r.error_code, r.active])).toEqual([
        ['canceled', 'appointment_canceled', false],
        ['canceled', 'appointment_canceled', false],
      ]);
    }
    // The platform may set any status from any: canceled, then booked again.
    const canceled = await put(b, 'again', { ...at, status: 'canceled' });
    expect(canceled.appointment.reminders).toEqual([]);
    const booked = await put(b, 'again', { ...at, status: 'booked' });
    expect(booked.appointment.status).toBe('booked');
    expect(booked.appointment.reminders.map((r) => [r.before, r.status])).toEqual([
      ['P2D', 'scheduled'],
      ['PT2H', 'scheduled'],
    ]);
  });

  it('a confirmed appointment moved stays confirmed and is not asked again; moved with status booked, it is', async () => {
    const { b, client } = await setup();
    const { appointment } = await put(b, 'm1', { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) });
    await confirmAppointment(b, appointment.appointment_id, { actor: api });
    const pendingAsks = async () =>
      (await reminders(b, appointment.appointment_id)).filter((r) => r.status === 'scheduled').map((r) => r.asks_confirmation);
    const moved = await put(b, 'm1', { client_id: client.id, starts_at: nyAt(5, 12), ends_at: nyAt(5, 13) });
    expect(moved.appointment.status).toBe('confirmed');
    expect(await pendingAsks()).toEqual([false]);
    const asked = await put(b, 'm1', { client_id: client.id, starts_at: nyAt(6, 12), ends_at: nyAt(6, 13), status: 'booked' });
    expect(asked.appointment.status).toBe('booked');
    expect(await pendingAsks()).toEqual([true, false]);
  });

  it('a change of client, location or staff member writes the pending reminders again, with their words', async () => {
    const { b, client } = await setup();
    await setBusinessReminderRules(b, [
      { before: 'P1D', text: '{client_first_name}: {staff_first_name} at {location_name}', asks_confirmation: false },
    ]);
    const [rui, eva] = [await createStaff(b, { name: 'Rui Costa' }), await createStaff(b, { name: 'Eva Dias' })];
    const [uptown, downtown] = [await createLocation(b, { name: 'Uptown' }), await createLocation(b, { name: 'Downtown' })];
    const other = await createClient(b, { name: 'Bea Reis' });
    const at = { starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) };
    const { appointment } = await put(b, 'w1', { ...at, client_id: client.id, staff_id: rui.id, location_id: uptown.id });
    const changes = [
      { client_id: client.id, staff_id: eva.id, location_id: uptown.id },
      { client_id: client.id, staff_id: eva.id, location_id: downtown.id },
      { client_id: other.id, staff_id: eva.id, location_id: downtown.id },
    ];
    for (const change of changes) await put(b, 'w1', { ...at, ...change });
    const rows = await reminders(b, appointment.appointment_id);
    expect(rows.map((r) => [r.status, r.error_code, r.content])).toEqual([
      ['canceled', 'appointment_moved', 'Ana: Rui at Uptown'],
      ['canceled', 'appointment_moved', 'Ana: Eva at Uptown'],
      ['canceled', 'appointment_moved', 'Ana: Eva at Downtown'],
      ['scheduled', null, 'Bea: Eva at Downtown'],
    ]);
  });

  it('a reminder staff canceled, or one that went, is not written again for its time, even when the appointment moves away and back', async () => {
    const { t, b, client } = await setup();
    const first = { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) };
    const { appointment } = await put(b, 'k1', first);
    const [asking, later] = await reminders(b, appointment.appointment_id);
    await cancelScheduledMessage(b, asking!.message_id, { type: 'staff', staff_id: t.owner.id });
    await db.execute(sql`update messages set status = 'sent' where id = ${later!.message_id}`);
    await put(b, 'k1', { client_id: client.id, starts_at: nyAt(5, 12), ends_at: nyAt(5, 13) });
    await put(b, 'k1', first);
    const rows = await reminders(b, appointment.appointment_id);
    // The first two as they were, the two written for the other time canceled when it moved back, none new.
    expect(rows.map((r) => [r.message_id, r.status, r.error_code])).toEqual([
      [asking!.message_id, 'canceled', 'canceled'],
      [later!.message_id, 'sent', null],
      [expect.any(Number), 'canceled', 'appointment_moved'],
      [expect.any(Number), 'canceled', 'appointment_moved'],
    ]);
  });

  it('rules apply to reminders written from then on: the defaults until set, and scheduled reminders keep theirs', async () => {
    const { t, b, client } = await setup();
    const defaults = await getJson(`${t.base}/reminder-rules`, t.key);
    expect(defaults.body).toMatchObject({ source: 'default', cancel_on_request: false });
    expect(defaults.body.rules).toEqual(defaults.body.default_rules);
    expect(
      defaults.body.rules.map((r: { before: string; asks_confirmation: boolean }) => [r.before, r.asks_confirmation]),
    ).toEqual([
      ['P2D', true],
      ['PT2H', false],
    ]);
    const at = { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) };
    const { appointment } = await put(b, 'n1', at);
    const written = await reminders(b, appointment.appointment_id);
    await setBusinessReminderRules(b, [{ before: 'PT3H', text: 'Soon: {service}', asks_confirmation: false }]);
    await put(b, 'n1', at);
    expect(await reminders(b, appointment.appointment_id)).toEqual(written);
    // Changed (its service), it is reminded by the rules in force.
    await put(b, 'n1', { ...at, service: 'Massage' });
    const pending = (await reminders(b, appointment.appointment_id)).filter((r) => r.status === 'scheduled');
    expect(pending.map((r) => [r.before_seconds, r.content])).toEqual([[10_800, 'Soon: Massage']]);
  });

  it('confirming cancels the pending reminders that ask, keeps the others, and logs appointment.confirmed', async () => {
    const { b, client } = await setup();
    const { appointment } = await put(b, 'c1', { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) });
    const id = appointment.appointment_id;
    const reply = await db.execute<{ id: number }>(sql`select id from messages where business_id = ${b} limit 1`);
    const confirmed = await confirmAppointment(b, id, { actor: { type: 'client' }, messageId: Number(reply[0]!.id) });
    expect(confirmed.changed).toBe(true);
    expect(confirmed.appointment.status).toBe('confirmed');
    expect((await reminders(b, id)).map((r) => [r.asks_confirmation, r.status, r.error_code])).toEqual([
      [true, 'canceled', 'appointment_confirmed'],
      [false, 'scheduled', null],
    ]);
    expect((await confirmAppointment(b, id, { actor: { type: 'client' } })).changed).toBe(false);
    expect((await requestReschedule(b, id, { actor: { type: 'client' } })).appointment.status).toBe('confirmed');
    expect((await requestCancel(b, id, { actor: { type: 'client' } })).changed).toBe(true);
    const appointmentEvents = () =>
      db.execute<{
        type: string;
        actor_type: string;
        message_id: number | null;
        data: Record<string, unknown>;
      }>(sql`
        select type, actor_type, message_id, data from events where business_id = ${b} and type like 'appointment.%' order by id`);
    const logged = await appointmentEvents();
    expect(logged.map((e) => e.type)).toEqual([
      'appointment.created',
      'appointment.confirmed',
      'appointment.reschedule_requested',
      'appointment.cancel_requested',
    ]);
    expect(logged[1]).toMatchObject({ actor_type: 'client', message_id: Number(reply[0]!.id) });
    expect(logged[1]!.data).toMatchObject({ status: 'confirmed', previous_status: 'booked', message_id: Number(reply[0]!.id) });
    // A platform update of a confirmed appointment writes no asking reminder again.
    await put(b, 'c1', { client_id: client.id, starts_at: nyAt(4, 15), ends_at: nyAt(4, 16) });
    const pending = (await reminders(b, id)).filter((r) => r.status === 'scheduled');
    expect(pending.map((r) => r.asks_confirmation)).toEqual([false]);
    // Once canceled, a request about it changes nothing and logs nothing.
    await put(b, 'c1', { client_id: client.id, starts_at: nyAt(4, 15), ends_at: nyAt(4, 16), status: 'canceled' });
    const sofar = await appointmentEvents();
    expect((await requestReschedule(b, id, { actor: { type: 'client' } })).changed).toBe(false);
    expect((await requestCancel(b, id, { actor: { type: 'client' } })).changed).toBe(false);
    expect(await appointmentEvents()).toEqual(sofar);
  });

  it('finds the open reminder a reply is read against: the latest that asked and went, before the start', async () => {
    const { b, client } = await setup();
    const { appointment } = await put(b, 'r1', { client_id: client.id, starts_at: nyAt(4, 12), ends_at: nyAt(4, 13) });
    const now = new Date();
    expect(await openConfirmationReminder(b, client.id, client.phoneNumber!, now)).toBeNull();
    const [asking] = (await reminders(b, appointment.appointment_id)).filter((r) => r.asks_confirmation);
    await db.execute(
      sql`update messages set status = 'delivered', sent_at = now() - interval '1 minute' where id = ${asking!.message_id}`,
    );
    expect(await openConfirmationReminder(b, client.id, client.phoneNumber!, now)).toMatchObject({
      appointmentId: appointment.appointment_id,
      externalId: 'r1',
      status: 'booked',
      reminderMessageId: asking!.message_id,
    });
    expect(await openConfirmationReminder(b, client.id, '+12125550000', now)).toBeNull();
    expect(await openConfirmationReminder(b, client.id, client.phoneNumber!, nyAt(4, 12, 1))).toBeNull();
  });

  it('follows a location’s own rules, texts with variables and saved replies, and [] for none', async () => {
    const { t, b, client } = await setup();
    const staff = await createStaff(b, { name: 'Rui Costa' });
    const quiet = await createLocation(b);
    const custom = await createLocation(b, { name: 'Uptown' });
    const saved = await createSavedReply(b, {
      title: 'Reminder',
      body: 'Hi {{client.first_name}}, {{staff.first_name}} expects you {appointment_time}',
      channel: 'sms',
    });
    await setLocationReminderRules(b, quiet.id, []);
    await setLocationReminderRules(b, custom.id, [
      {
        before: 'P1DT12H',
        text: '{client_first_name}, your {service} with {staff_first_name} at {location_name}',
        asks_confirmation: true,
      },
      { before: 'PT45M', saved_reply_id: saved.saved_reply_id, asks_confirmation: false },
    ]);
    const none = await put(b, 'l1', {
      client_id: client.id,
      location_id: quiet.id,
      starts_at: nyAt(3, 12),
      ends_at: nyAt(3, 13),
    });
    expect(await reminders(b, none.appointment.appointment_id)).toEqual([]);
    const own = await put(b, 'l2', {
      client_id: client.id,
      location_id: custom.id,
      staff_id: staff.id,
      service: 'Massage',
      starts_at: nyAt(3, 12),
      ends_at: nyAt(3, 13),
    });
    const rows = await reminders(b, own.appointment.appointment_id);
    expect(rows.map((r) => [r.before_seconds, r.content])).toEqual([
      [129_600, 'Ana, your Massage with Rui at Uptown'],
      [2700, expect.stringMatching(/^Hi Ana, Rui expects you \w+day, \w+ \d+ 12:00 PM$/)],
    ]);
    // No service: a rule naming {service} is not written (never a "{service}" in a client's phone).
    const bare = await put(b, 'l3', {
      client_id: client.id,
      location_id: custom.id,
      staff_id: staff.id,
      starts_at: nyAt(3, 14),
      ends_at: nyAt(3, 15),
    });
    expect((await reminders(b, bare.appointment.appointment_id)).map((r) => r.before_seconds)).toEqual([2700]);

    const bad = await putJson(`${t.base}/reminder-rules`, t.key, {
      rules: [
        { before: 'PT10M', text: 'x' },
        { before: 'P31D', text: 'x' },
        { before: 'P1W', text: 'x' },
        { before: 'PT2H', text: 'Hi {first_name}' },
        { before: 'PT120M', text: 'x', saved_reply_id: saved.saved_reply_id },
      ],
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual([
      ['body', 'rules', 0, 'before'],
      ['body', 'rules', 1, 'before'],
      ['body', 'rules', 2, 'before'],
      ['body', 'rules', 3, 'text'],
    ]);
    const dup = await putJson(`${t.base}/reminder-rules`, t.key, {
      rules: [
        { before: 'PT2H', text: 'x' },
        { before: 'PT120M', text: 'x', saved_reply_id: saved.saved_reply_id },
        { before: 'P1D' },
        { before: 'P2D', saved_reply_id: 2_000_000_000 },
      ],
    });
    expect(locs(dup.body)).toEqual([
      ['body', 'rules', 1, 'before'],
      ['body', 'rules', 1, 'text'],
      ['body', 'rules', 2, 'text'],
      ['body', 'rules', 3, 'saved_reply_id'],
    ]);
    const emailOnly = await createSavedReply(b, { title: 'By email', body: 'See you', channel: 'email', subject: 'Soon' });
    const byEmail = await putJson(`${t.base}/reminder-rules`, t.key, {
      rules: [{ before: 'PT2H', saved_reply_id: emailOnly.saved_reply_id }],
    });
    expect(locs(byEmail.body)).toEqual([['body', 'rules', 0, 'saved_reply_id']]);
    // A saved reply naming what this client lacks (a name) is not written; the other rules' reminders are.
    const mixed = await createLocation(b);
    await setLocationReminderRules(b, mixed.id, [
      { before: 'PT45M', saved_reply_id: saved.saved_reply_id, asks_confirmation: false },
      { before: 'PT2H', text: 'See you {appointment_time}', asks_confirmation: false },
    ]);
    const nameless = await createClient(b, { name: null });
    const noName = await put(b, 'l4', {
      client_id: nameless.id,
      location_id: mixed.id,
      staff_id: staff.id,
      starts_at: nyAt(3, 16),
      ends_at: nyAt(3, 17),
    });
    expect((await reminders(b, noName.appointment.appointment_id)).map((r) => r.before_seconds)).toEqual([7200]);
    const six = await putJson(`${t.base}/reminder-rules`, t.key, {
      rules: Array.from({ length: 6 }, (_, i) => ({ before: `PT${i + 1}H`, text: 'x' })),
    });
    expect(locs(six.body)).toEqual([['body', 'rules']]);
    const ok = await putJson(`${t.base}/reminder-rules`, t.key, {
      rules: [{ before: 'PT90M', text: 'Soon: {appointment_time}' }],
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      source: 'business',
      rules: [{ before: 'PT1H30M', text: 'Soon: {appointment_time}', saved_reply_id: null, asks_confirmation: false }],
    });
    expect(ok.body.locations).toEqual(
      expect.arrayContaining([{ location_id: quiet.id, rules: [] }, expect.objectContaining({ location_id: custom.id })]),
    );
    const removed = await fetchDelete(t.base, custom.id, t.key);
    expect(removed.find((l) => l.location_id === custom.id)!.rules).toBeNull();
  });
});

async function fetchDelete(base: string, locationId: number, key: Record<string, string>) {
  const { deleteJson } = await import('@/server/testing/http');
  const res = await deleteJson(`${base}/locations/${locationId}/reminder-rules`, key);
  expect(res.status).toBe(200);
  return res.body.locations as { location_id: number; rules: unknown }[];
}
