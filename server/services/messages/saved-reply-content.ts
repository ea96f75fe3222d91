import type { Tx } from '@/server/db/client';
import type { ValidationIssue } from '@/server/errors';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { resolveSavedReplies } from '@/server/services/saved-replies';

/** A planned queue item, as much of it as a saved reply fills in. */
export type Fillable = {
  index: number;
  /** Null for a new lead: no name or location yet. */
  clientId: number | null;
  content: string;
  subject: string | null;
  item: { message?: string; saved_reply_id?: number; subject?: string };
};

/**
 * Queue items naming a `saved_reply_id` get the reply's text resolved for their recipient
 * (docs/api.md#saved-replies), for the whole request at once. Each item that cannot be sent as
 * resolved is a 422 at its index: a reply this business does not have, one limited to the other
 * channel, a variable with no value for this recipient (it would reach them as `{{…}}`), an SMS
 * that resolves past 1,600 characters, an email with no subject from the item or the reply.
 */
export async function fillFromSavedReplies(
  businessId: number,
  channel: 'sms' | 'email',
  staffId: number | null,
  planned: Fillable[],
  issues: ValidationIssue[],
  tx: Tx,
): Promise<void> {
  const uses = planned.filter((p) => p.item.saved_reply_id !== undefined);
  if (uses.length === 0) return;
  const resolved = await resolveSavedReplies(
    businessId,
    uses.map((p) => ({ savedReplyId: p.item.saved_reply_id!, clientId: p.clientId })),
    staffId,
    tx,
  );
  uses.forEach((p, i) => {
    const id = p.item.saved_reply_id!;
    const r = resolved[i];
    const problem = (msg: string, field = 'saved_reply_id', type = 'value_error') =>
      issues.push({ loc: ['body', 'messages', p.index, field], msg, type });
    if (!r) return problem(`Saved reply ${id} not found in this business`);
    if (r.reply.channel !== null && r.reply.channel !== channel) {
      return problem(`Saved reply "${r.reply.title}" is for ${r.reply.channel} only`);
    }
    const subject = channel === 'email' && p.item.subject === undefined ? r.subject : null;
    const missing = [...new Set([...r.body.missing, ...(subject?.missing ?? [])])];
    if (missing.length) {
      return problem(
        `Saved reply "${r.reply.title}" has no value for ${missing.map((m) => `{{${m}}}`).join(', ')} for this recipient`,
      );
    }
    if (channel === 'sms' && r.body.text.length > MAX_SMS_LENGTH) {
      return problem(
        `Saved reply "${r.reply.title}" resolves to ${r.body.text.length} characters; an SMS has at most ${MAX_SMS_LENGTH}`,
      );
    }
    p.content = r.body.text;
    if (channel === 'email') {
      p.subject = p.item.subject ?? subject?.text ?? null;
      if (p.subject === null) problem(`Saved reply "${r.reply.title}" has no subject: give subject`, 'subject', 'missing');
    }
  });
}
