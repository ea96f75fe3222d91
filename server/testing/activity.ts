import { conversationActivityHandler } from '@/server/services/activity/handler';
import { conversationActivity } from '@/server/services/activity/read';
import { dispatchEvents } from '@/server/services/events/dispatch';

/**
 * Runs the activity handler through the real dispatcher until the conversation has no event left
 * to turn into a line (no worker runs in a test file's database). The dispatcher reads below the
 * oldest transaction running in the whole cluster, other test files' included: it may take a moment.
 */
export async function settleActivity(conversation: { businessId: number; id: number; clientId: number }): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    while ((await dispatchEvents(conversationActivityHandler)) > 0);
    if (!(await conversationActivity(conversation, null)).behind) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the activity handler did not catch up');
}
