import { closeDb } from '@/server/db/client';
import { addNote } from '@/server/services/conversations/messages';

/** `tsx e2e/cli/add-note-cli.ts BUSINESS CONVERSATION TEXT`: a change made by another process (tests of cross-process events). */
const [businessId, conversationId, content] = process.argv.slice(2);
await addNote(Number(businessId), Number(conversationId), content ?? 'note', null);
await closeDb();
process.exit(0);
