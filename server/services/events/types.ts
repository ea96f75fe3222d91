import { z } from 'zod';
import {
  CHANNELS,
  CONSENT_CHANNELS,
  CONSENT_PURPOSES,
  CONSENT_SOURCES,
  CONSENT_STATUSES,
  CONVERSATION_STATUSES,
  DIRECTIONS,
  EVENT_ACTOR_TYPES,
  MESSAGE_STATUSES,
  MESSAGE_TYPES,
  OPT_OUT_CHANNELS,
  OPT_OUT_EVENT_SOURCES,
  type EventType,
} from '@/db/schema';
import { APPOINTMENT_STATUSES, MAX_EXTERNAL_ID } from '@/server/shared/appointments';
import { MAX_NOTE_MENTIONS } from '@/server/shared/limits';

/**
 * What each event type of the log carries in `data` (docs/api.md#events): one zod schema per type,
 * checked when the event is written (record.ts), so every reader (the live stream, outgoing
 * webhooks, the handlers of later features) can rely on it. Ids are the API's integers; times are
 * ISO 8601 strings. Data stays small: a reader that wants the whole resource fetches it by id.
 * Strings copied from stored rows carry no length bound here: the rows' own columns have none, and
 * a change must never fail for the size of its event.
 */

const id = z.number().int().positive();
const int32 = z.number().int().min(0).max(2_147_483_647);
const iso = z.string().datetime({ offset: true });

/** Who made a change; `staff_id` with `staff` (docs/api.md#events). */
export const EventActor = z.strictObject({ type: z.enum(EVENT_ACTOR_TYPES), staff_id: id.optional() });
export type EventActor = z.infer<typeof EventActor>;

const message = {
  message_id: id,
  conversation_id: id,
  client_id: id.nullable(),
  // Null for a note: it travels on no channel.
  channel: z.enum(CHANNELS).nullable(),
  message_type: z.enum(MESSAGE_TYPES),
  direction: z.enum(DIRECTIONS),
  status: z.enum(MESSAGE_STATUSES),
};
const conversation = { conversation_id: id };
/**
 * An appointment's identity and where it stands (docs/api.md#appointments): ours and the platform's
 * id, its client, its time and status after the change. `message_id`: the client's reply that
 * caused a reply outcome (null when staff or the API made the change).
 */
const appointment = {
  appointment_id: id,
  external_id: z.string().min(1).max(MAX_EXTERNAL_ID),
  client_id: id,
  location_id: id.nullable(),
  staff_id: id.nullable(),
  starts_at: iso,
  ends_at: iso,
  status: z.enum(APPOINTMENT_STATUSES),
};
const outcome = { ...appointment, previous_status: z.enum(APPOINTMENT_STATUSES), message_id: id.nullable() };
/** The columns an `appointment.updated` names as changed. */
export const APPOINTMENT_FIELDS = [
  'client_id',
  'location_id',
  'staff_id',
  'starts_at',
  'ends_at',
  'service',
  'status',
  'notes',
] as const;

export const EVENT_DATA = {
  'message.received': z.strictObject({ ...message }),
  'message.created': z.strictObject({ ...message, send_at: iso.nullable() }),
  'message.status_updated': z.strictObject({
    ...message,
    previous_status: z.enum(MESSAGE_STATUSES).nullable(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
  }),
  'message.flagged': z.strictObject({ ...message, flagged: z.boolean() }),
  'message.rescheduled': z.strictObject({ ...message, send_at: iso, previous_send_at: iso.nullable() }),
  // A scheduled text's words changed before it went (the inbox's Edit); the new text is the message's own.
  'message.edited': z.strictObject({ ...message }),
  'conversation.created': z.strictObject({ ...conversation, client_id: id }),
  'conversation.assigned': z.strictObject({
    ...conversation,
    staff_id: id.nullable(),
    previous_staff_id: id.nullable(),
    // `auto`: auto-assignment gave it (docs/api.md#auto-assignment); `manual`: staff or the API.
    by: z.enum(['manual', 'auto']),
  }),
  'conversation.status_changed': z.strictObject({
    ...conversation,
    status: z.enum(CONVERSATION_STATUSES),
    previous_status: z.enum(CONVERSATION_STATUSES),
  }),
  'conversation.snoozed': z.strictObject({ ...conversation, snoozed_until: iso }),
  'conversation.woke': z.strictObject({ ...conversation }),
  'conversation.labeled': z.strictObject({
    ...conversation,
    label: z.string().nullable(),
    previous_label: z.string().nullable(),
  }),
  'conversation.read': z.strictObject({
    ...conversation,
    is_read: z.boolean(),
    message_count: int32,
    unread_count: int32,
  }),
  // The staff the note @mentions (docs/api.md#mentions): at most MAX_NOTE_MENTIONS, empty for most notes.
  'note.created': z.strictObject({
    ...conversation,
    message_id: id,
    staff_id: id.nullable(),
    mentioned_staff_ids: z.array(id).max(MAX_NOTE_MENTIONS),
  }),
  'client.updated': z.strictObject({ client_id: id, fields: z.array(z.string()) }),
  'client.opted_out': z.strictObject({
    channel: z.enum(OPT_OUT_CHANNELS),
    address: z.string(),
    source: z.enum(OPT_OUT_EVENT_SOURCES),
    // The history record's note: the reason staff gave, or the client's words for an opt-in.
    note: z.string().nullable(),
    client_ids: z.array(id).max(1000),
  }),
  'client.opted_in': z.strictObject({
    channel: z.enum(OPT_OUT_CHANNELS),
    address: z.string(),
    source: z.enum(OPT_OUT_EVENT_SOURCES),
    // The history record's note: the reason staff gave, or the client's words for an opt-in.
    note: z.string().nullable(),
    client_ids: z.array(id).max(1000),
  }),
  'consent.recorded': z.strictObject({
    client_id: id,
    channel: z.enum(CONSENT_CHANNELS),
    purpose: z.enum(CONSENT_PURPOSES),
    status: z.enum(CONSENT_STATUSES),
    source: z.enum(CONSENT_SOURCES),
    recorded_at: iso,
  }),
  'call.started': z.strictObject({ ...message, duration_seconds: int32.nullable() }),
  'call.completed': z.strictObject({ ...message, duration_seconds: int32.nullable() }),
  'voicemail.received': z.strictObject({ ...message, duration_seconds: int32.nullable() }),
  // A staff member went Away or came back (docs/api.md#staff-availability).
  'staff.availability_changed': z.strictObject({ staff_id: id, away: z.boolean() }),
  'webhook_endpoint.disabled': z.strictObject({ endpoint_id: id, reason: z.string() }),
  'appointment.created': z.strictObject({ ...appointment }),
  // What changed, with the previous start and status (the rest is the appointment's now).
  'appointment.updated': z.strictObject({
    ...appointment,
    fields: z.array(z.enum(APPOINTMENT_FIELDS)).min(1).max(APPOINTMENT_FIELDS.length),
    previous_starts_at: iso,
    previous_status: z.enum(APPOINTMENT_STATUSES),
  }),
  'appointment.confirmed': z.strictObject({ ...outcome }),
  'appointment.reschedule_requested': z.strictObject({ ...outcome }),
  'appointment.cancel_requested': z.strictObject({ ...outcome }),
  'appointment.canceled': z.strictObject({ ...outcome }),
} satisfies Record<EventType, z.ZodType>;

export type EventData = { [T in EventType]: z.infer<(typeof EVENT_DATA)[T]> };
