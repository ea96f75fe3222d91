'use client';
import { trpc } from '@/components/trpc/client';
import { AppointmentsCard } from './appointments-card';
import { ClientProfile } from './client-profile';
import { ConsentPanel } from './consent-panel';
import { initials } from './format';
import styles from './inbox.module.css';
import { LabelEditor } from './label-editor';
import { OptOutControl } from './opt-out-control';
import { OptOutHistory } from './opt-out-history';

const CLIENT_TYPE = { lead: 'Lead', new: 'New client', returning: 'Returning client', vip: 'VIP' } as Record<string, string>;

/** Who the client is: contact details, client type, opt-out state, location. */
export function ClientPanel({ conversationId }: { conversationId: number }) {
  const details = trpc.inbox.conversation.useQuery({ conversationId });
  const filters = trpc.inbox.filters.useQuery();
  if (details.isPending)
    return (
      <p role="status" className={styles.state}>
        Loading client…
      </p>
    );
  if (details.error)
    return (
      <p role="alert" className={`${styles.state} ${styles.error}`}>
        Client details unavailable.
      </p>
    );
  const c = details.data;
  const location = filters.data?.locations.find((l) => l.location_id === c.location_id)?.name;
  return (
    <>
      <span className={`${styles.avatar} ${styles.bigAvatar}`} aria-hidden>
        {initials(c.client_name)}
      </span>
      <ClientProfile key={c.client_id} clientId={c.client_id} name={c.client_name} email={c.client_email} />
      <span className={styles.chip}>{CLIENT_TYPE[c.client_type ?? ''] ?? c.client_type ?? 'Client'}</span>
      <dl className={styles.dl}>
        <dt>Mobile</dt>
        <dd>{c.client_phone_number ? <a href={`tel:${c.client_phone_number}`}>{c.client_phone_number}</a> : '—'}</dd>
        <dt>Email</dt>
        <dd>{c.client_email ? <a href={`mailto:${c.client_email}`}>{c.client_email}</a> : '—'}</dd>
        <dt>Texts</dt>
        <dd>
          <span data-testid="sms-consent">
            {c.opted_out_sms ? <span className={styles.failed}>Opted out</span> : 'Subscribed'}
          </span>
          <OptOutControl clientId={c.client_id} channel="sms" optedOut={c.opted_out_sms} hasAddress={!!c.client_phone_number} />
        </dd>
        <dt>Emails</dt>
        <dd>
          <span data-testid="email-consent">
            {c.opted_out_email ? <span className={styles.failed}>Unsubscribed</span> : 'Subscribed'}
          </span>
          <OptOutControl clientId={c.client_id} channel="email" optedOut={c.opted_out_email} hasAddress={!!c.client_email} />
        </dd>
        <dt>Location</dt>
        <dd>{location ?? '—'}</dd>
        <dt>Assigned</dt>
        <dd>{c.assigned_to ?? 'Nobody'}</dd>
        <dt>Label</dt>
        <dd>
          <LabelEditor key={conversationId} conversationId={conversationId} label={c.label} />
        </dd>
        <dt>Flagged</dt>
        <dd>{c.messages_flagged_count}</dd>
        {c.resolved_by ? (
          <>
            <dt>Resolved by</dt>
            <dd>{c.resolved_by}</dd>
          </>
        ) : null}
      </dl>
      <AppointmentsCard conversationId={conversationId} />
      <OptOutHistory conversationId={conversationId} />
      <ConsentPanel conversationId={conversationId} />
    </>
  );
}
