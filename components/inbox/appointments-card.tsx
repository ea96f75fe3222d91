'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { describeError } from './format';
import styles from './inbox.module.css';
import { appointmentTime, beforeWords } from './appointment-words';
import own from './appointments.module.css';
import type { CardAppointment as Appointment, MessageItem } from './types';
type Reminder = Appointment['reminders'][number];

export const STATUS: Record<Appointment['status'], string> = {
  booked: 'Booked',
  confirmed: 'Confirmed',
  canceled: 'Canceled',
  completed: 'Completed',
  no_show: 'No-show',
};

function reminderState(r: Reminder, timeZone: string): string {
  const at = appointmentTime(timeZone, r.at, false);
  if (r.status === 'scheduled') return `scheduled for ${at}`;
  if (r.status === 'canceled') return `canceled ${at}`;
  if (r.status === 'failed' || r.status === 'undelivered') return `not delivered (${at})`;
  return `sent ${at}`;
}

function AppointmentItem({ a, conversationId }: { a: Appointment; conversationId: number }) {
  const utils = trpc.useUtils();
  const [asking, setAsking] = useState(false);
  const refresh = {
    onSettled: () => {
      void utils.inbox.appointments.invalidate({ conversationId });
      void utils.inbox.messages.invalidate({ conversationId });
    },
  };
  const confirm = trpc.inbox.confirmAppointment.useMutation(refresh);
  const cancel = trpc.inbox.cancelAppointment.useMutation({ ...refresh, onSuccess: () => setAsking(false) });
  const pending = confirm.isPending || cancel.isPending;
  const error = describeError(confirm.error ?? cancel.error);
  const what = [a.service, a.staff_name ? `with ${a.staff_name}` : null, a.location_name ? `at ${a.location_name}` : null]
    .filter(Boolean)
    .join(' ');
  return (
    <li className={own.item} data-testid="appointment" data-appointment-id={a.appointment_id}>
      <div className={own.head}>
        <time className={own.time} dateTime={a.starts_at} title={a.time_zone}>
          {appointmentTime(a.time_zone, a.starts_at)}
        </time>
        <span className={`${own.badge} ${own[a.status] ?? ''}`} data-testid="appointment-status">
          {STATUS[a.status]}
        </span>
      </div>
      {what ? <div className={own.what}>{what}</div> : null}
      {a.reminders.length ? (
        <ul className={own.reminders} aria-label="Reminders">
          {a.reminders.map((r) => (
            <li key={r.message_id} data-testid="appointment-reminder" data-status={r.status}>
              Reminder {beforeWords(r.before)}
              {r.asks_confirmation ? ' (asks to confirm)' : ''}: {reminderState(r, a.time_zone)}
              {r.for_earlier_time ? ', for an earlier time' : ''}
            </li>
          ))}
        </ul>
      ) : null}
      {a.status === 'booked' || a.status === 'confirmed' ? (
        <div className={own.actions}>
          {asking ? (
            <span role="group" aria-label="Confirm cancel">
              Cancel this appointment? The booking system is told.{' '}
              <button
                type="button"
                className={`${styles.button} ${styles.primary}`}
                disabled={pending}
                onClick={() => cancel.mutate({ appointmentId: a.appointment_id })}
              >
                Yes, cancel it
              </button>{' '}
              <button type="button" className={`${styles.button} ${styles.ghost}`} onClick={() => setAsking(false)}>
                Keep it
              </button>
            </span>
          ) : (
            <>
              {a.status === 'booked' ? (
                <button
                  type="button"
                  className={`${styles.button} ${styles.primary}`}
                  disabled={pending}
                  onClick={() => confirm.mutate({ appointmentId: a.appointment_id })}
                >
                  Confirm
                </button>
              ) : null}
              <button type="button" className={styles.button} disabled={pending} onClick={() => setAsking(true)}>
                Cancel
              </button>
            </>
          )}
        </div>
      ) : null}
      {error ? (
        <p role="alert" className={own.error}>
          {error}
        </p>
      ) : null}
    </li>
  );
}

/**
 * The client's appointments (docs/api.md#appointments): the next ones and the latest past ones,
 * each on its location's clock with its status, service, staff member and reminders; staff confirm
 * a booked one or cancel it (asked first) — the booking system hears of it through the outgoing
 * webhooks. Live: the stream's client.updated frame of an appointment event refetches it.
 */
export function AppointmentsCard({ conversationId }: { conversationId: number }) {
  const card = trpc.inbox.appointments.useQuery({ conversationId });
  if (card.isPending) return null;
  if (card.error)
    return (
      <section aria-label="Appointments" className={own.panel}>
        <h3 className={own.title}>Appointments</h3>
        <p className={own.error}>Appointments unavailable.</p>
      </section>
    );
  const { upcoming, recent } = card.data;
  return (
    <section aria-label="Appointments" className={own.panel}>
      <h3 className={own.title}>Appointments</h3>
      {upcoming.length === 0 && recent.length === 0 ? <p className={own.none}>No appointments.</p> : null}
      {upcoming.length ? (
        <>
          <h4 className={own.subtitle}>Upcoming</h4>
          <ul className={own.list} aria-label="Upcoming appointments">
            {upcoming.map((a) => (
              <AppointmentItem key={a.appointment_id} a={a} conversationId={conversationId} />
            ))}
          </ul>
        </>
      ) : null}
      {recent.length ? (
        <>
          <h4 className={own.subtitle}>Recent</h4>
          <ul className={own.list} aria-label="Recent appointments">
            {recent.map((a) => (
              <AppointmentItem key={a.appointment_id} a={a} conversationId={conversationId} />
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

/**
 * Under a reminder in the timeline: the appointment it is for and its status now (docs/api.md#reminders),
 * from the card's appointments (the client's next and latest ones); nothing for an older one.
 */
export function ReminderFor({ m }: { m: MessageItem }) {
  const card = trpc.inbox.appointments.useQuery({ conversationId: m.conversation_id });
  const all = card.data ? [...card.data.upcoming, ...card.data.recent] : [];
  const a = all.find((x) => x.reminders.some((r) => r.message_id === m.message_id));
  if (!a) return null;
  return (
    <span className={own.reminderFor} data-testid="reminder-for">
      Reminder for {a.service ?? 'the appointment'}, {appointmentTime(a.time_zone, a.starts_at)} · {STATUS[a.status]}
    </span>
  );
}
