/**
 * Appointments (docs/api.md#appointments): the platform's copies, their reminders and the outcomes
 * of replies. The modules: upsert.ts (PUT), read.ts (GET), client-card.ts (the inbox's card),
 * outcomes.ts (confirm, requests, cancel, and the open reminder a reply is read against),
 * reminders.ts (scheduling), review-requests.ts (after a completed appointment: settings and
 * scheduling), follow-ups.ts (both, after every change), rules.ts (reminder rules), events.ts (the
 * log), refs.ts (client, location and staff ids of this business), replies-handler.ts (the event
 * log's reader of replies to reminders), onboarding.ts (onboarding's appointments). Here: what the
 * doors (REST, tRPC) call.
 */
export { upsertAppointment } from './upsert';
export { getAppointment, listAppointments } from './read';
export { clientAppointments } from './client-card';
export { cancelAppointment, cancelByExternalId, confirmAppointment } from './outcomes';
export { reminderRules, setBusinessReminderRules, setLocationReminderRules } from './rules';
export { reviewRequestSettings, setReviewRequestSettings } from './review-requests';
