import { describe, expect, it } from 'vitest';
import { inViewButRead, withKeptRows, type KeptRow } from './kept-rows';
import type { ConversationRow, ListInput } from './types';

const row = (id: number, over: Partial<ConversationRow> = {}): ConversationRow =>
  ({
    conversation_id: id,
    client_id: id,
    client_name: `Client ${id}`,
    status: 'open',
    assigned_staff_id: null,
    last_updated_channel: 'sms',
    location_id: null,
    label: null,
    unread_messages_count: 1,
    messages_flagged_count: 0,
    possible_opt_out_message_id: null,
    needs_attention_reason: null,
    ...over,
  }) as ConversationRow;

const unreadOpen: ListInput = { status: ['open'], assignment: 'all', unread: 'true', page_size: 50 };

describe('rows kept in the list after they were read', () => {
  it('a read conversation stays at its place, drawn from its latest details (no longer unread)', () => {
    const kept = new Map<number, KeptRow>([[2, { index: 1, row: row(2) }]]);
    const read = row(2, { unread_messages_count: 0 });
    const { rows, keptIds } = withKeptRows([row(1), row(3)], kept, (id) => (id === 2 ? read : undefined), unreadOpen, 7);
    expect(rows.map((r) => r.conversation_id)).toEqual([1, 2, 3]);
    expect(rows[1]).toBe(read);
    expect(keptIds).toEqual([2]);
  });

  it('a kept row the fresh page still has is shown once, from the page; past the end it goes last', () => {
    const kept = new Map<number, KeptRow>([
      [1, { index: 0, row: row(1) }],
      [9, { index: 40, row: row(9) }],
    ]);
    const { rows, keptIds } = withKeptRows([row(1), row(3)], kept, () => undefined, unreadOpen, 7);
    expect(rows.map((r) => r.conversation_id)).toEqual([1, 3, 9]);
    expect(keptIds).toEqual([9]);
  });

  it('a conversation that left the view for another reason than reading leaves the list', () => {
    const kept = new Map<number, KeptRow>([[2, { index: 0, row: row(2) }]]);
    const gone = (details: Partial<ConversationRow>, input: ListInput = unreadOpen) =>
      withKeptRows([], kept, () => row(2, { unread_messages_count: 0, ...details }), input, 7).rows;
    expect(gone({ status: 'resolved' })).toEqual([]);
    expect(gone({ assigned_staff_id: 8 }, { ...unreadOpen, assignment: 'mine' })).toEqual([]);
    expect(gone({ assigned_staff_id: 7 }, { ...unreadOpen, assignment: 'mine' })).toHaveLength(1);
    expect(gone({ label: 'Cut' }, { ...unreadOpen, label: 'Color' })).toEqual([]);
    expect(gone({ messages_flagged_count: 0 }, { ...unreadOpen, flagged: 'true' })).toEqual([]);
    expect(gone({ possible_opt_out_message_id: null }, { ...unreadOpen, possible_opt_out: 'true' })).toEqual([]);
    expect(gone({ last_updated_channel: 'email' }, { ...unreadOpen, channel: 'sms' })).toEqual([]);
    // Needs attention: staff confirmed or canceled the appointment from the card.
    const attention: ListInput = { assignment: 'all', needs_attention: 'true', page_size: 50 };
    expect(gone({ needs_attention_reason: null }, attention)).toEqual([]);
    expect(gone({ needs_attention_reason: 'reschedule' }, attention)).toHaveLength(1);
  });

  it('reads the view as the list query does: any status when none is given', () => {
    const flagged: ListInput = { assignment: 'all', flagged: 'true', page_size: 50 };
    expect(inViewButRead(row(1, { status: 'resolved', messages_flagged_count: 2 }), flagged, null)).toBe(true);
    expect(inViewButRead(row(1, { status: 'resolved' }), unreadOpen, null)).toBe(false);
    expect(inViewButRead(row(1), { ...unreadOpen, assignment: 'mine' }, null)).toBe(false);
  });
});
