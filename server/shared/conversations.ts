/**
 * The conversation statuses (docs/api.md#conversation-statuses): the DB CHECK constraint and the zod schemas (through
 * db/schema/enums.ts) and the inbox's status tabs all read this list. Bundled for the browser:
 * no imports.
 */
export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
/**
 * Why a conversation needs attention (docs/api.md#needs-attention): how the client's reply to an
 * appointment reminder was read, when staff must decide.
 */
export const NEEDS_ATTENTION_REASONS = ['reschedule', 'cancel', 'unclear', 'opt_out'] as const;
export type NeedsAttentionReason = (typeof NEEDS_ATTENTION_REASONS)[number];
