'use client';
import type { OptOutEventSource } from '@/db/schema/enums';
import { trpc } from '@/components/trpc/client';
import { OPT_IN_SOURCE_LABEL } from './opt-out-control';
import { useStaffNames } from './staff-names';
import own from './consent-panel.module.css';

const SOURCE_LABEL: Record<OptOutEventSource, string> = {
  ...OPT_IN_SOURCE_LABEL,
  keyword: 'Reply keyword',
  staff: 'Staff',
  provider_error: 'Provider report',
  api: 'API',
  import: 'Import',
  migrated: 'Earlier version',
};

const when = (iso: string) =>
  new Date(iso).toLocaleString(undefined, {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  });

/**
 * The client's opt-out history (docs/api.md#opt-out): every opt-out and opt-in of their number and
 * address, with who, how and the note; newest first.
 */
export function OptOutHistory({ conversationId }: { conversationId: number }) {
  const history = trpc.inbox.optOutHistory.useQuery({ conversationId });
  const staffName = useStaffNames();
  if (!history.data || history.data.history.length === 0) return null;
  const nameOf = (id: number | null) => (id === null ? null : (staffName(id) ?? `staff ${id}`));
  return (
    <details className={own.history} aria-label="Opt-out history">
      <summary>Opt-out history ({history.data.history.length})</summary>
      <ol>
        {history.data.history.map((h) => (
          <li key={h.event_id}>
            {when(h.created_at)}: {h.channel === 'sms' ? 'texts' : 'email'}{' '}
            {h.action === 'opt_out' ? 'opted out' : 'opted back in'} ({SOURCE_LABEL[h.source]}
            {nameOf(h.staff_id) ? `, by ${nameOf(h.staff_id)}` : ''}){h.note ? ` — “${h.note}”` : ''}
          </li>
        ))}
      </ol>
    </details>
  );
}
