'use client';
import { useState, type FormEvent } from 'react';
import { trpc } from '@/components/trpc/client';
import {
  AFTER_HOURS_VARIABLES,
  MAX_AFTER_HOURS_REPLY,
  renderAfterHoursReply,
  unknownAfterHoursVariables,
} from '@/server/shared/after-hours';
import { describeError } from './format';
import { SettingsError, SettingsPage } from './settings-page';
import settings from './settings.module.css';
import styles from './after-hours.module.css';

/**
 * The after-hours answer (docs/api.md#after-hours-answer): the text a client gets, once per closed
 * period, when they text or email while the business (or their location) is closed, previewed as
 * they would read it; and the locale times are written in. Off while blank.
 */

type Owner = { location_id?: number; name?: string; text: string | null; next_opening: string | null; time_zone: string };

const VARIABLE_HELP: Record<(typeof AFTER_HOURS_VARIABLES)[number], string> = {
  business_name: "the business's name",
  location_name: "the client's location (the business's name without one)",
  next_opening: 'when it opens next, on the location’s clock',
};

export function AfterHoursSettings() {
  const query = trpc.inbox.afterHoursReply.useQuery();
  const [ownerId, setOwnerId] = useState<number | null>(null);
  const data = query.data;
  const location = ownerId === null ? undefined : data?.locations.find((l) => l.location_id === ownerId);
  const owner: Owner | undefined = location ?? data?.business;
  // Held here, not in the form: a save changes the stored text, which gives the form a new draft
  // (its key), and "Saved." must outlive that.
  const utils = trpc.useUtils();
  const save = trpc.inbox.setAfterHoursReply.useMutation({ onSuccess: () => void utils.inbox.afterHoursReply.invalidate() });

  return (
    <SettingsPage title="After-hours answer">
      <section aria-label="Whose answer" className={styles.wide}>
        <p className={settings.body}>
          When a client texts or emails while you are closed (see Opening hours), they get this answer at once, once per closed
          period, never to STOP or HELP, to an opted-out client, to an automatic email, or when one of you wrote to them in the
          last five minutes. Leave it blank to send none.
        </p>
        {query.isPending ? <p role="status">Loading…</p> : null}
        {data && data.locations.length > 0 ? (
          <label>
            Answer for{' '}
            <select
              className={settings.field}
              value={ownerId ?? ''}
              onChange={(e) => {
                setOwnerId(e.target.value ? Number(e.target.value) : null);
                save.reset();
              }}
            >
              <option value="">The business (every location without its own)</option>
              {data.locations.map((l) => (
                <option key={l.location_id} value={l.location_id}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </section>
      {data && owner ? (
        <ReplyForm
          // A new draft when the owner or the stored text changes.
          key={`${ownerId}-${owner.text}`}
          save={save}
          owner={owner}
          location={location ?? null}
          businessName={data.business_name}
          businessText={data.business.text}
          locale={data.locale}
        />
      ) : null}
      {data ? <LocaleForm key={data.locale} locale={data.locale} /> : null}
    </SettingsPage>
  );
}

function ReplyForm({
  save,
  owner,
  location,
  businessName,
  businessText,
  locale,
}: {
  save: ReturnType<typeof trpc.inbox.setAfterHoursReply.useMutation>;
  owner: Owner;
  location: { location_id: number; name: string } | null;
  businessName: string;
  businessText: string | null;
  locale: string;
}) {
  // A location without its own answer keeps the business's, shown as the starting point.
  const ownText = owner.text;
  const [text, setText] = useState(ownText ?? (location ? (businessText ?? '') : ''));
  const unknown = unknownAfterHoursVariables(text);
  const preview = text.trim()
    ? renderAfterHoursReply(text, {
        businessName,
        locationName: location?.name ?? null,
        nextOpening: owner.next_opening ? new Date(owner.next_opening) : null,
        timeZone: owner.time_zone,
        locale,
        now: new Date(),
      })
    : null;
  const label = location ? `${location.name} after-hours answer` : 'Business after-hours answer';

  return (
    <form
      aria-label={label}
      className={settings.form}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ locationId: location?.location_id ?? null, text });
      }}
    >
      <h2>{location ? location.name : 'The business'}</h2>
      {location && ownText === null ? (
        <p className={settings.body}>{location.name} uses the business&apos;s answer. Saving gives it its own.</p>
      ) : null}
      <label>
        Answer
        <textarea
          className={`${settings.field} ${settings.textarea}`}
          value={text}
          maxLength={MAX_AFTER_HOURS_REPLY}
          rows={4}
          onChange={(e) => {
            setText(e.target.value);
            save.reset();
          }}
        />
      </label>
      <ul className={settings.variables} aria-label="Variables">
        {AFTER_HOURS_VARIABLES.map((v) => (
          <li key={v}>
            <code>{`{${v}}`}</code>: {VARIABLE_HELP[v]}
          </li>
        ))}
      </ul>
      {unknown.length ? (
        <p role="alert" className={settings.error}>
          {unknown.map((v) => `{${v}}`).join(', ')} {unknown.length > 1 ? 'are' : 'is'} not a variable.
        </p>
      ) : null}
      <h3>Preview</h3>
      <p className={styles.preview} data-testid="after-hours-preview">
        {!text.trim() ? 'Off: no answer is sent.' : (preview ?? 'No opening ahead: an answer naming {next_opening} is not sent.')}
      </p>
      <SettingsError error={describeError(save.error, { text: 'Answer' })} />
      <div className={settings.row}>
        <button type="submit" className={`${settings.button} ${settings.primary}`} disabled={save.isPending}>
          Save the answer
        </button>
        {location && ownText !== null ? (
          <button
            type="button"
            className={settings.button}
            disabled={save.isPending}
            onClick={() => save.mutate({ locationId: location.location_id, text: null })}
          >
            Use the business&apos;s answer
          </button>
        ) : null}
        {save.isSuccess ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}

function LocaleForm({ locale }: { locale: string }) {
  const utils = trpc.useUtils();
  const save = trpc.inbox.setLocale.useMutation({ onSuccess: () => void utils.inbox.afterHoursReply.invalidate() });
  const [value, setValue] = useState(locale);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({ locale: value });
  };
  return (
    <form aria-label="Locale" className={settings.form} onSubmit={submit}>
      <h2>Locale</h2>
      <label>
        How dates and times are written to clients (a language tag such as en-US, en-GB, de-DE)
        <input className={settings.field} value={value} maxLength={35} onChange={(e) => setValue(e.target.value)} />
      </label>
      <SettingsError error={describeError(save.error, { locale: 'Locale' })} />
      <div className={settings.row}>
        <button type="submit" className={settings.button} disabled={save.isPending}>
          Save the locale
        </button>
      </div>
    </form>
  );
}
