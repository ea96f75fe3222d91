import type { EventType } from '@/db/schema';

/**
 * What the inbox's live stream carries (docs/api.md#live-events): one frame per event of the log
 * (docs/architecture.md#event-log), saying which conversations, messages or clients it touched, so
 * the inbox refetches only those; the frame's SSE id is the event's id. `refetch` is the stream's
 * own: it could not replay what the client missed (see server/realtime/listen.ts), so the client
 * reloads everything it shows.
 */
export type InboxEvent =
  | { type: 'message.created'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'message.status'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'conversation.updated'; businessId: number; conversationIds: number[] }
  | { type: 'client.updated'; businessId: number; conversationIds: number[]; clientIds: number[] }
  // A colleague's availability changed: the inbox reloads the states it shows (no conversation touched).
  | { type: 'staff.updated'; businessId: number; conversationIds: number[] }
  | { type: 'refetch'; businessId: number; conversationIds: number[] };

type FrameType = Exclude<InboxEvent['type'], 'refetch'>;

/**
 * The frame of each event type the inbox shows. An outgoing webhook endpoint's state is not part of
 * the inbox: `webhook_endpoint.disabled` is not streamed (null).
 */
const FRAME_OF = {
  'message.received': 'message.created',
  'message.created': 'message.created',
  'note.created': 'message.created',
  'call.started': 'message.created',
  'message.status_updated': 'message.status',
  'message.flagged': 'message.status',
  'message.rescheduled': 'message.status',
  'message.edited': 'message.status',
  'call.completed': 'message.status',
  'voicemail.received': 'message.status',
  'conversation.created': 'conversation.updated',
  'conversation.assigned': 'conversation.updated',
  'conversation.status_changed': 'conversation.updated',
  'conversation.snoozed': 'conversation.updated',
  'conversation.woke': 'conversation.updated',
  'conversation.labeled': 'conversation.updated',
  'conversation.read': 'conversation.updated',
  'client.updated': 'client.updated',
  'client.opted_out': 'client.updated',
  'client.opted_in': 'client.updated',
  'consent.recorded': 'client.updated',
  'staff.availability_changed': 'staff.updated',
  'webhook_endpoint.disabled': null,
  // An appointment belongs to its client: the client panel shows it (docs/api.md#appointments).
  'appointment.created': 'client.updated',
  'appointment.updated': 'client.updated',
  'appointment.confirmed': 'client.updated',
  'appointment.reschedule_requested': 'client.updated',
  'appointment.cancel_requested': 'client.updated',
  'appointment.canceled': 'client.updated',
} as const satisfies Record<EventType, FrameType | null>;

/** The event types the stream carries, for the queries that read them from the log. */
export const STREAMED_TYPES = (Object.keys(FRAME_OF) as EventType[]).filter((t) => FRAME_OF[t] !== null);

/** The columns of an event row a frame is made of. */
export type EventRow = {
  type: EventType;
  business_id: number;
  conversation_id: number | null;
  message_id: number | null;
  client_id: number | null;
  /** `data.client_ids` of an opt-out or opt-in (the clients at the address), else null. */
  client_ids: number[] | null;
};

/** The frame of one event (null: not streamed). */
export function frameOf(row: EventRow): InboxEvent | null {
  const type = FRAME_OF[row.type];
  if (type === null) return null;
  const businessId = row.business_id;
  const conversationIds = row.conversation_id === null ? [] : [row.conversation_id];
  if (type === 'conversation.updated' || type === 'staff.updated') return { type, businessId, conversationIds };
  if (type === 'client.updated') {
    const clientIds = row.client_ids ?? (row.client_id === null ? [] : [row.client_id]);
    return { type, businessId, conversationIds, clientIds };
  }
  return { type, businessId, conversationIds, messageIds: row.message_id === null ? [] : [row.message_id] };
}
