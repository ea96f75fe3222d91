import { describe, expect, it } from 'vitest';
import type { LoggedEvent } from '@/server/services/events/dispatch';
import { touchesOf } from './handler';

/** Which events make the reports handler recount a conversation: only what can change a figure. */
const created = (data: Record<string, unknown>, actor: LoggedEvent['actor'], conversationId: number): LoggedEvent => ({
  id: conversationId,
  businessId: 1,
  type: 'message.created',
  conversationId,
  messageId: conversationId,
  clientId: 1,
  actor,
  data: { message_type: 'TEXT', direction: 'outbound', status: 'queued', ...data },
  occurredAt: new Date('2026-11-27T10:00:00Z'),
});

describe('touchesOf', () => {
  it('a reply, a recorded inbound text and our calls recount; a system text, a scheduled or canceled one do not', () => {
    const staff = { type: 'staff' as const, staff_id: 3 };
    const touches = touchesOf([
      created({}, staff, 1), // a reply
      created({ direction: 'inbound', status: 'received' }, { type: 'api' }, 2), // recorded from another system
      created({ message_type: 'CALL', status: 'ringing' }, staff, 3), // a call-back
      created({}, { type: 'system' }, 4), // a campaign's, a reminder, an automatic answer
      created({ status: 'scheduled' }, staff, 5),
      created({ status: 'canceled' }, staff, 6),
    ]);
    expect(touches.get(1)!.conversations.map((t) => t.conversationId)).toEqual([1, 2, 3]);
    // The others are still counted in volumes: their messages are read again, their conversations not recounted.
    expect(touches.get(1)!.messages).toEqual([4, 5, 6]);
  });

  it('a status change is read again only when it can change whether the message counts', () => {
    const status = (previous: string | null, status: string, conversationId: number): LoggedEvent => ({
      ...created({}, { type: 'system' }, conversationId),
      type: 'message.status_updated',
      data: { message_type: 'TEXT', direction: 'outbound', status, previous_status: previous },
    });
    const touches = touchesOf([
      status('sending', 'sent', 1), // a scheduled message claimed and sent: its first event
      status('queued', 'canceled', 2),
      status('sent', 'delivered', 3),
      status('delivered', 'failed', 4),
      status(null, 'queued', 5),
    ]);
    expect(touches.get(1)).toEqual({ conversations: [], messages: [1, 2, 5] });
  });
});
