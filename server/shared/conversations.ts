/**
 * The conversation statuses (docs/api.md#conversation-statuses): the DB CHECK constraint and the zod schemas (through
 * db/schema/enums.ts) and the inbox's status tabs all read this list. Bundled for the browser:
 * no imports.
 */
export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
