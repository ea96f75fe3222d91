import { APPOINTMENT_REPLY_WORDS } from '@/server/shared/appointment-replies';
import type { NeedsAttentionReason } from '@/server/shared/conversations';
import styles from './needs-attention.module.css';

/** A list row's reason, short; its title is the timeline's words for the reply (docs/api.md#needs-attention). */
export const NEEDS_ATTENTION_WORDS: Record<NeedsAttentionReason, string> = {
  reschedule: 'Reschedule requested',
  cancel: 'Cancellation requested',
  unclear: 'Reply unclear',
  opt_out: 'Opted out, not confirmed',
};

export function NeedsAttentionChip({ reason }: { reason: NeedsAttentionReason }) {
  return (
    <span className={styles.chip} data-testid="needs-attention-reason" title={APPOINTMENT_REPLY_WORDS[reason]}>
      {NEEDS_ATTENTION_WORDS[reason]}
    </span>
  );
}
