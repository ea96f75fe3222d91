'use client';
import { useEffect, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus } from '@/server/shared/outgoing-webhooks';
import { describeError } from './format';
import { SettingsError } from './settings-page';
import type { WebhookDelivery, WebhookEndpoint } from './types';
import { OUTCOME_LABEL, deliveryState, eventLabel, readableJson, when } from './webhook-labels';
import styles from './settings.module.css';
import own from './webhooks.module.css';

const PAGE_SIZE = 20;
/** While a delivery is due within this long, the list is refreshed every POLL_SOON_MS; else every POLL_LATER_MS. */
const DUE_SOON_MS = 60_000;
const POLL_SOON_MS = 2_000;
const POLL_LATER_MS = 30_000;

/**
 * One address's recent deliveries, newest first, filtered by outcome and paged. The worker sends
 * them: the list refreshes itself while any is waiting, quickly while one is due within a minute,
 * and each refresh reloads the addresses too (an address's health follows its deliveries).
 */
export function WebhookDeliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const utils = trpc.useUtils();
  const [outcome, setOutcome] = useState<WebhookDeliveryStatus | ''>('');
  const [page, setPage] = useState(1);
  const list = trpc.inbox.webhookDeliveries.useQuery(
    { endpointId: endpoint.id, outcome: outcome || undefined, page, page_size: PAGE_SIZE },
    {
      refetchInterval: (q) => {
        const waiting = q.state.data?.deliveries.filter((d) => d.status === 'pending') ?? [];
        if (!waiting.length) return false;
        const soon = waiting.some((d) => !d.next_attempt_at || Date.parse(d.next_attempt_at) - Date.now() < DUE_SOON_MS);
        return soon ? POLL_SOON_MS : POLL_LATER_MS;
      },
    },
  );
  const updatedAt = list.dataUpdatedAt;
  useEffect(() => {
    if (updatedAt) void utils.inbox.webhookEndpoints.invalidate();
  }, [updatedAt, utils]);

  return (
    <section aria-label="Deliveries" className={own.wide}>
      <h2 className={own.url}>Recent deliveries to {endpoint.url}</h2>
      <div className={own.actions}>
        <label className={own.inline}>
          Show{' '}
          <select
            className={styles.field}
            value={outcome}
            onChange={(ev) => {
              setOutcome(ev.target.value as WebhookDeliveryStatus | '');
              setPage(1);
            }}
          >
            {(['', ...WEBHOOK_DELIVERY_STATUSES] as const).map((o) => (
              <option key={o} value={o}>
                {OUTCOME_LABEL[o]}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className={styles.button} onClick={() => void list.refetch()} disabled={list.isFetching}>
          Refresh
        </button>
      </div>
      {list.isPending ? <p role="status">Loading…</p> : null}
      <SettingsError error={describeError(list.error)} />
      {list.data?.deliveries.length === 0 ? (
        <p>{outcome ? 'None of these.' : 'Nothing sent yet. “Send test event” sends one now.'}</p>
      ) : null}
      <ul className={styles.list}>
        {list.data?.deliveries.map((d) => (
          <DeliveryItem key={d.id} delivery={d} endpoint={endpoint} />
        ))}
      </ul>
      {list.data && (page > 1 || list.data.next_page) ? (
        <nav aria-label="Delivery pages" className={own.actions}>
          <button type="button" className={styles.button} disabled={page === 1} onClick={() => setPage(page - 1)}>
            Newer
          </button>
          <span>Page {page}</span>
          <button type="button" className={styles.button} disabled={!list.data.next_page} onClick={() => setPage(page + 1)}>
            Older
          </button>
        </nav>
      ) : null}
    </section>
  );
}

/** A delivery: what was sent, how it went, the request and the answer on demand, and Redeliver. */
function DeliveryItem({ delivery: d, endpoint }: { delivery: WebhookDelivery; endpoint: WebhookEndpoint }) {
  const utils = trpc.useUtils();
  const redeliver = trpc.inbox.redeliverWebhook.useMutation({
    onSuccess: () => void utils.inbox.webhookDeliveries.invalidate({ endpointId: endpoint.id }),
  });
  const state = deliveryState(d);
  // Not while its first attempt is on its way: there is nothing to send again yet.
  const canRedeliver = !(d.status === 'pending' && d.attempts === 0);
  const error = describeError(redeliver.error);

  return (
    <li className={styles.item} data-testid="webhook-delivery">
      <div className={own.deliveryHead}>
        <strong>{eventLabel(d.event_type)}</strong>
        <span className={`${own.badge} ${own[state.tone]}`} data-testid="delivery-status">
          {state.label}
        </span>
        {canRedeliver ? (
          <button
            type="button"
            className={styles.button}
            disabled={!endpoint.enabled || redeliver.isPending}
            title={endpoint.enabled ? undefined : 'Turn the address on to redeliver'}
            onClick={() => redeliver.mutate({ endpointId: endpoint.id, deliveryId: d.id })}
          >
            Redeliver
          </button>
        ) : null}
      </div>
      <dl className={own.facts}>
        <dt>Event</dt>
        <dd>
          <code>{d.event_type}</code> #{d.event_id}
        </dd>
        <dt>Attempts</dt>
        <dd data-testid="delivery-attempts">{d.attempts}</dd>
        <dt>Answer</dt>
        <dd data-testid="delivery-code">{d.last_status_code ?? (d.attempts ? 'none' : '–')}</dd>
        <dt>Took</dt>
        <dd>{d.last_duration_ms === null ? '–' : `${d.last_duration_ms} ms`}</dd>
        <dt>Last try</dt>
        <dd>{d.last_attempt_at ? when(d.last_attempt_at) : '–'}</dd>
        {d.next_attempt_at ? (
          <>
            <dt>Next try</dt>
            <dd>{when(d.next_attempt_at)}</dd>
          </>
        ) : null}
        {d.last_error ? (
          <>
            <dt>Error</dt>
            <dd data-testid="delivery-error">{d.last_error}</dd>
          </>
        ) : null}
      </dl>
      <details className={own.details}>
        <summary>Request body</summary>
        <pre>{readableJson(d.request_body)}</pre>
      </details>
      <details className={own.details}>
        <summary>Response body</summary>
        <pre data-testid="delivery-response">{d.last_response_body || '(empty)'}</pre>
      </details>
      <SettingsError error={error} />
    </li>
  );
}
