'use client';
import { useEffect, useId, useRef, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { EVENT_TYPES, type EventType } from '@/server/shared/event-types';
import { MAX_WEBHOOK_DESCRIPTION, MAX_WEBHOOK_URL } from '@/server/shared/outgoing-webhooks';
import { SaveButtons, SettingsError, SettingsPage } from './settings-page';
import { describeError } from './format';
import type { WebhookEndpoint } from './types';
import { WebhookDeliveries } from './webhook-deliveries';
import { EVENT_LABEL, endpointHealth } from './webhook-labels';
import styles from './settings.module.css';
import own from './webhooks.module.css';

type Draft = { id: number | null; url: string; description: string; allEvents: boolean; events: EventType[] };
const EMPTY: Draft = { id: null, url: '', description: '', allEvents: true, events: [] };
type Secret = { url: string; secret: string; rotated: boolean };

/** The form's labels of the API's fields. */
const FIELD_LABELS = { url: 'Address', description: 'Description', event_types: 'Events' };

/**
 * Settings → Webhooks (docs/api.md#webhooks-you-receive-from-us), for owners and managers: the
 * addresses the business's events are sent to, their health, a form to add or edit one, the
 * signing secret shown once after creation and rotation, and each address's recent deliveries.
 * Other staff are told which role it needs (the server refuses them; the inbox hides the link).
 */
export function WebhookSettings() {
  const utils = trpc.useUtils();
  const list = trpc.inbox.webhookEndpoints.useQuery(undefined, { retry: false });
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [secret, setSecret] = useState<Secret | null>(null);
  const [shown, setShown] = useState<number | null>(null);
  const refresh = () => void utils.inbox.webhookEndpoints.invalidate();

  const create = trpc.inbox.createWebhookEndpoint.useMutation({
    onSuccess: (e) => {
      setDraft(EMPTY);
      setSecret({ url: e.url, secret: e.secret, rotated: false });
      setShown(e.id);
      refresh();
    },
  });
  const update = trpc.inbox.updateWebhookEndpoint.useMutation({
    onSuccess: () => {
      setDraft(EMPTY);
      refresh();
    },
  });
  const saving = create.isPending || update.isPending;
  const formError = describeError(create.error ?? update.error, FIELD_LABELS);

  function save() {
    const fields = {
      url: draft.url,
      description: draft.description.trim() ? draft.description : null,
      event_types: draft.allEvents ? null : draft.events,
    };
    if (draft.id === null) create.mutate(fields);
    else update.mutate({ endpointId: draft.id, ...fields });
  }

  if (list.error) {
    return (
      <SettingsPage title="Webhooks">
        <SettingsError
          error={
            list.error.data?.code === 'FORBIDDEN'
              ? 'Webhooks are managed by the business’s owners and managers: this page needs the owner or manager role.'
              : describeError(list.error)
          }
        />
      </SettingsPage>
    );
  }

  const endpoints = list.data?.webhook_endpoints ?? [];
  const open = endpoints.find((e) => e.id === shown);
  return (
    <SettingsPage title="Webhooks">
      <p className={`${styles.body} ${own.wide}`}>
        Webhooks send what happens in your inbox (messages, opt-outs, calls…) to another system you use, such as booking or
        marketing software, as it happens. The company that makes that system gives you the address to enter here.
      </p>
      {secret ? <SecretPanel secret={secret} onDone={() => setSecret(null)} /> : null}
      <section aria-label="Endpoints">
        <h2>Where events go</h2>
        {list.isPending ? <p role="status">Loading…</p> : null}
        {list.data && endpoints.length === 0 ? <p>No addresses yet: add the first one.</p> : null}
        <ul className={styles.list}>
          {endpoints.map((e) => (
            <EndpointItem
              key={e.id}
              endpoint={e}
              deliveriesShown={shown === e.id}
              onToggleDeliveries={() => setShown(shown === e.id ? null : e.id)}
              onEdit={() =>
                setDraft({
                  id: e.id,
                  url: e.url,
                  description: e.description ?? '',
                  allEvents: e.event_types === null,
                  events: e.event_types ?? [],
                })
              }
              onRotated={(s) => setSecret({ url: e.url, secret: s, rotated: true })}
              onTested={() => setShown(e.id)}
              onDeleted={() => {
                if (shown === e.id) setShown(null);
                if (draft.id === e.id) setDraft(EMPTY);
              }}
            />
          ))}
        </ul>
      </section>
      {list.data ? (
        <section aria-label={draft.id === null ? 'Add an endpoint' : 'Edit endpoint'}>
          <h2>{draft.id === null ? 'Add an address' : 'Edit address'}</h2>
          <EndpointForm draft={draft} onChange={setDraft} onSubmit={save} saving={saving} error={formError} />
        </section>
      ) : null}
      {open ? <WebhookDeliveries key={open.id} endpoint={open} /> : null}
    </SettingsPage>
  );
}

/** One address: what it receives, its health, and what can be done with it. */
function EndpointItem(props: {
  endpoint: WebhookEndpoint;
  deliveriesShown: boolean;
  onToggleDeliveries: () => void;
  onEdit: () => void;
  onRotated: (secret: string) => void;
  onTested: () => void;
  onDeleted: () => void;
}) {
  const { endpoint: e } = props;
  const utils = trpc.useUtils();
  const headingId = useId();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const changed = () => {
    void utils.inbox.webhookEndpoints.invalidate();
    void utils.inbox.webhookDeliveries.invalidate({ endpointId: e.id });
  };
  const toggle = trpc.inbox.updateWebhookEndpoint.useMutation({ onSuccess: changed });
  const test = trpc.inbox.testWebhookEndpoint.useMutation({
    onSuccess: () => {
      props.onTested();
      changed();
    },
  });
  const rotate = trpc.inbox.rotateWebhookSecret.useMutation({ onSuccess: (r) => props.onRotated(r.secret) });
  const remove = trpc.inbox.deleteWebhookEndpoint.useMutation({
    onSuccess: () => {
      props.onDeleted();
      void utils.inbox.webhookEndpoints.invalidate();
    },
  });
  const health = endpointHealth(e);
  const error = describeError(toggle.error ?? test.error ?? rotate.error ?? remove.error);

  return (
    <li className={styles.item} data-testid="webhook-endpoint">
      <article aria-labelledby={headingId} className={own.endpoint}>
        <strong id={headingId} className={own.url}>
          {e.url}
        </strong>
        {e.description ? <p className={styles.body}>{e.description}</p> : null}
        <p className={styles.body}>
          {/* The chosen events in the form's order, not the stored (alphabetical) one. */}
          Sends:{' '}
          {e.event_types === null
            ? 'all events'
            : EVENT_TYPES.filter((t) => e.event_types!.includes(t))
                .map((t) => EVENT_LABEL[t])
                .join(' · ')}
        </p>
        <p className={`${own.health} ${own[health.tone]}`} data-testid="endpoint-health">
          {health.label}
        </p>
        <div className={own.actions}>
          <button
            type="button"
            className={styles.button}
            disabled={!e.enabled || test.isPending}
            title={e.enabled ? undefined : 'Turn it on to send a test event'}
            onClick={() => test.mutate({ endpointId: e.id })}
          >
            Send test event
          </button>
          <button
            type="button"
            className={styles.button}
            aria-expanded={props.deliveriesShown}
            onClick={props.onToggleDeliveries}
          >
            {props.deliveriesShown ? 'Hide deliveries' : 'Show deliveries'}
          </button>
          <button type="button" className={styles.button} onClick={props.onEdit}>
            Edit
          </button>
          <button
            type="button"
            className={styles.button}
            disabled={toggle.isPending}
            onClick={() => toggle.mutate({ endpointId: e.id, enabled: !e.enabled })}
          >
            {e.enabled ? 'Turn off' : 'Turn on'}
          </button>
          <button
            type="button"
            className={styles.button}
            disabled={rotate.isPending}
            onClick={() => rotate.mutate({ endpointId: e.id })}
          >
            New secret
          </button>
          <button type="button" className={styles.button} onClick={() => setConfirmDelete(true)} disabled={confirmDelete}>
            Delete
          </button>
        </div>
        {confirmDelete ? (
          <div role="group" aria-label="Confirm delete" className={own.confirm}>
            <span>Delete this address and its delivery history? Nothing more will be sent to it.</span>
            <div className={own.actions}>
              <button
                type="button"
                className={`${styles.button} ${own.danger}`}
                disabled={remove.isPending}
                onClick={() => remove.mutate({ endpointId: e.id })}
              >
                Yes, delete
              </button>
              {/* Focus lands on the harmless choice, so Enter does not delete. */}
              <button type="button" className={styles.button} autoFocus onClick={() => setConfirmDelete(false)}>
                Cancel
              </button>
            </div>
          </div>
        ) : null}
        <SettingsError error={error} />
      </article>
    </li>
  );
}

/** The address, a description and the events: all of them (and any added later), or those chosen. */
function EndpointForm({
  draft,
  onChange,
  onSubmit,
  saving,
  error,
}: {
  draft: Draft;
  onChange: (d: Draft) => void;
  onSubmit: () => void;
  saving: boolean;
  error: string | null;
}) {
  const hintId = useId();
  return (
    <form
      className={styles.form}
      onSubmit={(ev) => {
        ev.preventDefault();
        onSubmit();
      }}
    >
      <label>
        Address (URL)
        <input
          className={styles.field}
          type="url"
          inputMode="url"
          value={draft.url}
          maxLength={MAX_WEBHOOK_URL}
          required
          placeholder="https://…"
          aria-describedby={hintId}
          onChange={(ev) => onChange({ ...draft, url: ev.target.value })}
        />
      </label>
      <span id={hintId} className={own.hint}>
        The address the other system gave you. Events are sent there as they happen.
      </span>
      <label>
        Description (optional)
        <input
          className={styles.field}
          value={draft.description}
          maxLength={MAX_WEBHOOK_DESCRIPTION}
          placeholder="e.g. Booking system"
          onChange={(ev) => onChange({ ...draft, description: ev.target.value })}
        />
      </label>
      <fieldset className={own.events}>
        <legend>Events to send</legend>
        <label className={own.choice}>
          <input type="radio" name="events" checked={draft.allEvents} onChange={() => onChange({ ...draft, allEvents: true })} />
          All events, including kinds added later
        </label>
        <label className={own.choice}>
          <input
            type="radio"
            name="events"
            checked={!draft.allEvents}
            onChange={() => onChange({ ...draft, allEvents: false })}
          />
          Only the ones I choose
        </label>
        {!draft.allEvents ? (
          <div role="group" aria-label="Events" className={own.eventList}>
            {EVENT_TYPES.map((t) => (
              <label key={t} className={own.choice}>
                <input
                  type="checkbox"
                  checked={draft.events.includes(t)}
                  onChange={(ev) =>
                    onChange({
                      ...draft,
                      events: ev.target.checked ? [...draft.events, t] : draft.events.filter((x) => x !== t),
                    })
                  }
                />
                {EVENT_LABEL[t]}
              </label>
            ))}
          </div>
        ) : null}
      </fieldset>
      <SettingsError error={error} />
      <SaveButtons newLabel="Add address" editing={draft.id !== null} saving={saving} onCancel={() => onChange(EMPTY)} />
    </form>
  );
}

/**
 * The signing secret, this once: focused when it appears, so a keyboard or screen reader user
 * lands on it; Copy puts it on the clipboard, and the note says it will not be shown again.
 */
function SecretPanel({ secret, onDone }: { secret: Secret; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    headingRef.current?.focus();
  }, [secret.secret]);

  return (
    <section aria-label="Signing secret" className={`${own.secret} ${own.wide}`}>
      <h2 ref={headingRef} tabIndex={-1}>
        {secret.rotated ? 'New signing secret' : 'Signing secret'} for {secret.url}
      </h2>
      <p className={styles.body}>
        Copy it into the system that receives the events: it uses it to check that each request really comes from us.{' '}
        <strong>It will not be shown again.</strong>
        {secret.rotated ? ' The old secret keeps working for 24 hours, so there is time to update it.' : null}
      </p>
      <div className={own.secretRow}>
        <label className={own.secretField}>
          <span className={own.hint}>Secret</span>
          <input className={styles.field} readOnly value={secret.secret} onFocus={(ev) => ev.target.select()} />
        </label>
        <button
          type="button"
          className={`${styles.button} ${styles.primary}`}
          onClick={() =>
            navigator.clipboard.writeText(secret.secret).then(
              () => setCopied('yes'),
              () => setCopied('no'),
            )
          }
        >
          Copy
        </button>
        <button type="button" className={styles.button} onClick={onDone}>
          Done, I saved it
        </button>
      </div>
      <p role="status" className={own.hint}>
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Could not copy: select the secret and copy it yourself.' : ''}
      </p>
    </section>
  );
}
