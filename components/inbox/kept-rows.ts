import type { ConversationDetails, ConversationRow, ListInput } from './types';

/**
 * Rows the conversation list keeps after they stop matching its view only because they were read.
 * Opening a conversation reads it, so in the Unread view (or any view that filters on unread) it
 * would vanish from under the pointer the moment it opens; instead it stays, where it was, until
 * the staff member refreshes the list or changes view, or a new message arrives (inbox-app.tsx).
 * A conversation that left the view for any other reason (resolved, reassigned, relabelled, its
 * flag removed, its appointment decided) leaves the list as before: that is what the staff member asked for.
 */
export type KeptRow = { index: number; row: ConversationRow };

/**
 * Whether a conversation still belongs in the list's view with its read state set aside: the list
 * query's own filters, checked against its latest details. A search (the list's `search`) is not
 * checked here: the inbox does not narrow the list by one.
 */
export function inViewButRead(c: ConversationDetails, input: ListInput, staffId: number | null): boolean {
  // The list's `status` takes a list or a comma-separated string; the inbox gives a list.
  const statuses: unknown[] | undefined = Array.isArray(input.status) ? input.status : undefined;
  if (statuses?.length && !statuses.includes(c.status)) return false;
  if (input.assignment === 'mine' && (staffId === null || c.assigned_staff_id !== staffId)) return false;
  if (input.assignment === 'unassigned' && c.assigned_staff_id !== null) return false;
  if (input.assignment === 'assigned' && c.assigned_staff_id === null) return false;
  if (input.channel !== undefined && c.last_updated_channel !== input.channel) return false;
  if (input.location_id !== undefined && c.location_id !== input.location_id) return false;
  if (input.label !== undefined && c.label !== input.label) return false;
  if (isTrue(input.flagged) !== undefined && isTrue(input.flagged) !== c.messages_flagged_count > 0) return false;
  const optOut = isTrue(input.possible_opt_out);
  if (optOut !== undefined && optOut !== (c.possible_opt_out_message_id !== null)) return false;
  // Needs attention (docs/api.md#needs-attention): staff decided the appointment, so it leaves the view.
  const attention = isTrue(input.needs_attention);
  if (attention !== undefined && attention !== (c.needs_attention_reason !== null)) return false;
  return true;
}

/** A query-string boolean of the list input ('true', '1', 'false', '0'), or undefined when not given. */
function isTrue(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'true' || value === '1';
}

/**
 * The rows to show: the fresh page, with each kept row that the fresh rows lack put back at its
 * place, drawn from its latest details when known (the read state then shows, the badge gone).
 * Kept rows whose details say they left the view for another reason are dropped.
 */
export function withKeptRows(
  fresh: ConversationRow[],
  kept: ReadonlyMap<number, KeptRow>,
  details: (conversationId: number) => ConversationDetails | undefined,
  input: ListInput,
  staffId: number | null,
): { rows: ConversationRow[]; keptIds: number[] } {
  const present = new Set(fresh.map((r) => r.conversation_id));
  const back = [...kept.entries()]
    .filter(([id]) => !present.has(id))
    .map(([id, k]) => ({ id, index: k.index, row: details(id) ?? k.row }))
    .filter((k) => inViewButRead(k.row, input, staffId))
    .sort((a, b) => a.index - b.index);
  const rows = [...fresh];
  for (const k of back) rows.splice(Math.min(k.index, rows.length), 0, k.row);
  return { rows, keptIds: back.map((k) => k.id) };
}
