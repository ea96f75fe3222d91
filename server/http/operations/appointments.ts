import {
  Appointment,
  AppointmentListQuery,
  AppointmentPath,
  LocationReminderRulesPath,
  PaginatedAppointments,
  PutAppointmentRequest,
  BusinessReminderRules,
  ReminderRules,
  ReminderRulesResponse,
  ReviewRequestSettingsRequest,
  ReviewRequestSettingsResponse,
} from '@/server/schemas/appointments';
import { businessPath } from '@/server/schemas/common';
import { defineOperation } from '../operation';

/** docs/api.md#appointments, #reminder-rules and #review-requests. */

const common = { tag: 'appointments', auth: 'any' as const, errors: [403, 404] };

export const listAppointments = defineOperation({
  operationId: 'listAppointments',
  method: 'get',
  path: '/businesses/{business_id}/appointments',
  summary: 'List appointments',
  description:
    'By start time, then id. `from` (inclusive) and `to` (exclusive) bound the start; `client_id` and `location_id` of another business are a 422.',
  params: businessPath,
  query: AppointmentListQuery,
  response: PaginatedAppointments,
  ...common,
});

export const getAppointment = defineOperation({
  operationId: 'getAppointment',
  method: 'get',
  path: '/businesses/{business_id}/appointments/{external_id}',
  summary: 'Get an appointment by the platform’s id',
  description: 'With its reminders. Another business’s appointment, or an unknown id, is a 404.',
  params: AppointmentPath,
  response: Appointment,
  ...common,
});

export const putAppointment = defineOperation({
  operationId: 'putAppointment',
  method: 'put',
  path: '/businesses/{business_id}/appointments/{external_id}',
  summary: 'Create or update an appointment by the platform’s id',
  description:
    '201 when created (`appointment.created`), 200 when updated (`appointment.updated` with the fields that changed) or unchanged (nothing logged). The client by `client_id` or `client_external_id` (exactly one); the location by `location_id` or `location_external_id` (at most one); ids of another business are a 422 on the field; `starts_at` before `ends_at`. Reminders are scheduled, moved or canceled to match (docs: Reminders).',
  params: AppointmentPath,
  body: PutAppointmentRequest,
  response: Appointment,
  upsert: true,
  ...common,
});

export const deleteAppointment = defineOperation({
  operationId: 'deleteAppointment',
  method: 'delete',
  path: '/businesses/{business_id}/appointments/{external_id}',
  summary: 'Cancel an appointment',
  description:
    'The appointment is kept, `canceled` (`appointment.canceled`), and its pending reminders are canceled. Canceling a canceled appointment changes nothing and logs nothing.',
  params: AppointmentPath,
  response: Appointment,
  ...common,
});

export const getReminderRules = defineOperation({
  operationId: 'getReminderRules',
  method: 'get',
  path: '/businesses/{business_id}/reminder-rules',
  summary: 'Get the reminder rules',
  description: 'The business’s rules (the defaults until it sets its own), each location’s own, and the defaults.',
  params: businessPath,
  response: ReminderRulesResponse,
  ...common,
});

export const putReminderRules = defineOperation({
  operationId: 'putReminderRules',
  method: 'put',
  path: '/businesses/{business_id}/reminder-rules',
  summary: 'Set the business’s reminder rules',
  description:
    '`[]` turns reminders off (except at locations with rules of their own). Applies to reminders written from now on; those already scheduled keep theirs.',
  params: businessPath,
  body: BusinessReminderRules,
  response: ReminderRulesResponse,
  ...common,
});

export const putLocationReminderRules = defineOperation({
  operationId: 'putLocationReminderRules',
  method: 'put',
  path: '/businesses/{business_id}/locations/{location_id}/reminder-rules',
  summary: 'Set a location’s own reminder rules',
  description: '`[]`: no reminders for appointments at this location.',
  params: LocationReminderRulesPath,
  body: ReminderRules,
  response: ReminderRulesResponse,
  ...common,
});

export const deleteLocationReminderRules = defineOperation({
  operationId: 'deleteLocationReminderRules',
  method: 'delete',
  path: '/businesses/{business_id}/locations/{location_id}/reminder-rules',
  summary: 'Remove a location’s own reminder rules',
  description: 'The location keeps to the business’s rules again.',
  params: LocationReminderRulesPath,
  response: ReminderRulesResponse,
  ...common,
});

export const getReviewRequestSettings = defineOperation({
  operationId: 'getReviewRequestSettings',
  method: 'get',
  path: '/businesses/{business_id}/review-requests',
  summary: 'Get the review request settings',
  description:
    'Off by default. When on, an appointment that becomes `completed` gets one review request (a scheduled text or email, `notification_type` `review_request`) after `delay_minutes`, at most once per client per `cooldown_days`, with the same link for everyone.',
  params: businessPath,
  response: ReviewRequestSettingsResponse,
  ...common,
});

export const putReviewRequestSettings = defineOperation({
  operationId: 'putReviewRequestSettings',
  method: 'put',
  path: '/businesses/{business_id}/review-requests',
  summary: 'Set the review request settings',
  description:
    'Fields left out keep their value. `enabled: true` needs a `review_link` (422 on it). `text` must contain `{review_link}`; null brings back the default. Applies to appointments completed from now on.',
  params: businessPath,
  body: ReviewRequestSettingsRequest,
  response: ReviewRequestSettingsResponse,
  ...common,
});
