'use client';
import { useState, type RefObject } from 'react';
import { trpc } from '@/components/trpc/client';
import { MAX_ATTACHMENT_BYTES, MAX_SMS_LENGTH } from '@/server/shared/limits';
import { unresolvedMessage, unresolvedVariables } from '@/server/shared/templates';
import { formatInZone, fromLocalInput, quickPicks } from '@/server/shared/zoned-time';
import { clockOf, localMinute, nextOpening, windowOpen } from '@/server/shared/quiet-hours';
import { CollisionNotice, useCollisionGuard } from './collision';
import { describeError } from './format';
import { MentionList, mentionBoxProps, useMentionPicker } from './mention-picker';
import styles from './inbox.module.css';
import { actionLabel, textCount, whenWords } from './plain-words';
import own from './texts.module.css';
import { usePresenceBeat } from './presence';
import { imageFiles, PictureAttachments, PicturePreviews, usePictureAttachments } from './picture-attachments';
import { SavedReplyPicker, useSavedReplyPicker, type PickerState } from './saved-reply-picker';
import type { ConversationDetails, MessageItem } from './types';

type Mode = 'sms' | 'email' | 'note';
const MODES: Mode[] = ['sms', 'email', 'note'];

/** Why a channel cannot be used for this client, or null when it can. */
function blockedReason(c: ConversationDetails, mode: Mode): string | null {
  if (mode === 'sms') {
    if (c.opted_out_sms)
      return 'This client is opted out of text messages, so texts to them are blocked. They can opt back in by texting START.';
    if (!c.client_phone_number) return 'This client has no mobile number on file.';
  }
  if (mode === 'email') {
    if (c.opted_out_email) return 'This client unsubscribed from email.';
    if (!c.client_email) return 'This client has no email address on file.';
  }
  return null;
}

type Attachment = { filename: string; content_type?: string; content: string };

async function readAttachment(file: File): Promise<Attachment> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { filename: file.name, content_type: file.type || undefined, content: btoa(binary) };
}

/** The `/query` being typed at the start of the caret's line (a saved-reply search), or null. */
function slashQuery(el: HTMLTextAreaElement): { query: string; start: number; end: number } | null {
  const end = el.selectionStart;
  const before = el.value.slice(0, end);
  const start = before.lastIndexOf('\n') + 1;
  const line = before.slice(start);
  return line.startsWith('/') && line.length <= 41 ? { query: line.slice(1), start, end } : null;
}

/**
 * SMS / Email / Note. Sends through the same services as REST; the message appears at once as
 * "Sending…" (optimistic) and its real status arrives by live events. Ctrl/⌘+Enter sends. A saved
 * reply (`/` at the start of a line, or the Saved replies button) fills in its text resolved for
 * this client; while a variable is left without a value, sending waits for staff to replace it.
 */
export function Composer({
  conversation: c,
  composerRef,
}: {
  conversation: ConversationDetails;
  composerRef: RefObject<HTMLTextAreaElement | null>;
}) {
  const conversationId = c.conversation_id!;
  const [mode, setMode] = useState<Mode>(c.last_updated_channel === 'email' ? 'email' : 'sms');
  const [text, setText] = useState('');
  const [subject, setSubject] = useState('');
  const [cc, setCc] = useState('');
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  /** Bumped after a send to clear the file input, whose chosen files the browser keeps otherwise. */
  const [fileInputKey, setFileInputKey] = useState(0);
  const [localError, setLocalError] = useState<string | null>(null);
  const [resolving, setResolving] = useState(false);
  const utils = trpc.useUtils();
  const later = useSendLater(conversationId);
  const quiet = useQuietHours(conversationId, mode === 'sms');
  const [overrideQuietHours, setOverrideQuietHours] = useState(false);
  const pictures = usePictureAttachments();
  const collision = useCollisionGuard(conversationId);
  const mention = useMentionPicker(mode === 'note');
  /** Puts the chosen colleague's name where `@…` was typed (docs/api.md#mentions). */
  function chooseMention(index: number) {
    const next = mention.choose(index, text);
    if (!next) return;
    setText(next.text);
    requestAnimationFrame(() => composerRef.current?.setSelectionRange(next.caret, next.caret));
  }
  // Colleagues see this conversation open here, and "replying…" or "writing a note…" while typing.
  usePresenceBeat(conversationId, mode === 'note' ? 'noting' : 'replying', text);

  /** Puts a saved reply, resolved for this conversation, where the picker was opened. */
  async function insertSavedReply(savedReplyId: number, { range }: PickerState) {
    setLocalError(null);
    setResolving(true);
    try {
      const reply = await utils.inbox.resolveSavedReply.fetch({ conversationId, savedReplyId }, { staleTime: 0 });
      setText((current) => current.slice(0, range.start) + reply.text + current.slice(range.end));
      if (mode === 'email' && reply.subject) setSubject(reply.subject);
      const caret = range.start + reply.text.length;
      requestAnimationFrame(() => {
        composerRef.current?.focus();
        composerRef.current?.setSelectionRange(caret, caret);
      });
    } catch (err) {
      setLocalError(err instanceof Error ? err.message : 'Could not load the saved reply.');
    } finally {
      setResolving(false);
    }
  }
  const picker = useSavedReplyPicker(mode === 'note' ? undefined : mode, (id, state) => void insertSavedReply(id, state));

  /** Shows the message in the timeline before the server answers. */
  function addPending(kind: MessageItem['message_type'], content: string, extra: Partial<MessageItem> = {}) {
    const pending = {
      message_id: -Date.now(),
      conversation_id: conversationId,
      client_id: c.client_id,
      message_type: kind,
      content,
      channel: kind === 'NOTE' ? null : kind === 'EMAIL' ? 'email' : 'sms',
      direction: 'outbound',
      message_status: 'pending',
      sent_at: new Date().toISOString(),
      flagged: false,
      is_read: true,
      subject: null,
      attachments: null,
      cc_email: null,
      ...extra,
    } as unknown as MessageItem;
    utils.inbox.messages.setInfiniteData({ conversationId, pageSize: 50 }, (data) => {
      if (!data?.pages.length) return data;
      const [first, ...rest] = data.pages;
      return { ...data, pages: [{ ...first!, messages: [pending, ...first!.messages] }, ...rest] };
    });
  }
  const settle = {
    onSettled: () => {
      void utils.inbox.messages.invalidate({ conversationId });
      void utils.inbox.list.invalidate();
    },
  };
  const sendSms = trpc.inbox.sendSms.useMutation({ ...settle, onMutate: (v) => addPending('TEXT', v.message) });
  const sendEmail = trpc.inbox.sendEmail.useMutation({
    ...settle,
    onMutate: (v) => addPending('EMAIL', v.message, { subject: v.subject }),
  });
  const addNote = trpc.inbox.addNote.useMutation({ ...settle, onMutate: (v) => addPending('NOTE', v.content) });
  const sendAt = mode === 'note' ? null : later.sendAt;
  // docs/api.md#quiet-hours: a text sent now outside the client's window, in a conversation that is
  // not live, waits for the window to open unless staff tick "Send now anyway".
  const heldUntil = mode === 'sms' && !sendAt && quiet?.holds ? quiet.opensAt : null;
  const busy = sendSms.isPending || sendEmail.isPending || addNote.isPending;
  const failed = sendSms.error ?? sendEmail.error ?? addNote.error;
  // A send the collision guard held shows its notice instead (CollisionNotice).
  const error =
    localError ??
    describeError(collision.held ? null : failed, {
      send_at: 'Send time',
      media_ids: 'Pictures',
      message: 'Message',
      subject: 'Subject',
      cc_email: 'Cc',
    });

  const blocked = blockedReason(c, mode);
  /** Pictures go with texts only (docs/api.md#mms-uploads), and only where a text may be sent. */
  const withPictures = mode === 'sms' && !blocked;
  const count = mode === 'sms' ? textCount(text, pictures.pictures.length) : null;
  // The button says what will happen (docs/api.md#send-later, #quiet-hours): Send, Send at …, Schedule.
  const action = actionLabel({
    mode,
    busy,
    sendAt,
    timeZone: later.timezone,
    choosingTime: mode !== 'note' && later.choice === 'custom',
    heldUntil: heldUntil && !overrideQuietHours ? heldUntil : null,
    heldZone: quiet?.timeZone ?? null,
  });
  const unresolved = mode === 'note' ? [] : unresolvedVariables(mode === 'email' ? `${subject}\n${text}` : text);
  const canSend =
    !busy &&
    !resolving &&
    unresolved.length === 0 &&
    !blocked &&
    text.trim().length > 0 &&
    (mode !== 'email' || subject.trim().length > 0) &&
    (mode !== 'sms' || (text.length <= MAX_SMS_LENGTH && pictures.settled)) &&
    (later.choice !== 'custom' || sendAt !== null) &&
    (later.choice === 'now' || later.ready);

  /** `anyway`: the collision notice's Send anyway (docs/api.md#collision-guard). */
  function send(anyway = false) {
    if (!canSend) return;
    setLocalError(null);
    const guard = collision.guard(anyway);
    collision.clear();
    const done = {
      onError: (err: { message: string; data?: unknown }) => collision.onError(err),
      onSuccess: () => {
        setText('');
        setSubject('');
        setCc('');
        setAttachments([]);
        setFileInputKey((k) => k + 1);
        setOverrideQuietHours(false);
        if (mode === 'sms') pictures.clear();
        mention.reset();
        later.reset();
      },
    };
    // docs/api.md#send-later: stored `scheduled`, sent at that time unless canceled first.
    const schedule = sendAt ? { send_at: sendAt.toISOString(), cancel_on_reply: later.cancelOnReply } : {};
    const mediaIds = pictures.mediaIds.length ? { media_ids: pictures.mediaIds } : {};
    if (mode === 'sms') {
      const quietHours = heldUntil && overrideQuietHours ? { override_quiet_hours: true } : {};
      sendSms.mutate({ conversationId, message: text, ...mediaIds, ...schedule, ...quietHours, ...guard }, done);
    } else if (mode === 'note') {
      const mentions = mention.mentionsIn(text);
      addNote.mutate({ conversationId, content: text, ...(mentions.length ? { mentions } : {}) }, done);
    } else {
      const ccList = cc
        .split(/[,;\s]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      sendEmail.mutate(
        {
          conversationId,
          subject,
          message: text,
          cc_email: ccList.length ? ccList : undefined,
          attachments: attachments.length ? attachments : undefined,
          ...schedule,
          ...guard,
        },
        done,
      );
    }
  }

  // A tab list is one Tab stop: the chosen tab; ←/→ choose another (WAI-ARIA tabs).
  const tab = (value: Mode, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={mode === value}
      tabIndex={mode === value ? 0 : -1}
      className={`${styles.tab} ${value === 'note' ? styles.tabNote : ''}`}
      onClick={() => setMode(value)}
      onKeyDown={(e) => {
        const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
        if (!step) return;
        e.preventDefault();
        const next = MODES[(MODES.indexOf(value) + step + MODES.length) % MODES.length]!;
        setMode(next);
        (e.currentTarget.parentElement?.children[MODES.indexOf(next)] as HTMLElement | undefined)?.focus();
      }}
    >
      {label}
    </button>
  );

  /** The email mode's fields above the message, side by side. */
  const emailFields = [
    { label: 'Subject', placeholder: 'Subject', value: subject, setValue: setSubject },
    { label: 'Cc', placeholder: 'Cc (comma separated)', value: cc, setValue: setCc },
  ];

  return (
    <form
      className={styles.composer}
      aria-label="Composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
      onDragOver={(e) => {
        if (withPictures && e.dataTransfer.types.includes('Files')) e.preventDefault();
      }}
      onDrop={(e) => {
        const files = withPictures ? imageFiles(e.dataTransfer.files) : [];
        if (files.length === 0) return;
        e.preventDefault();
        pictures.add(files);
      }}
    >
      <div className={styles.tabs} role="tablist" aria-label="Reply with">
        {tab('sms', 'SMS')}
        {tab('email', 'Email')}
        {tab('note', 'Note')}
      </div>
      {blocked ? (
        <p className={styles.disabledReason} role="note" data-testid="composer-blocked">
          {blocked}
        </p>
      ) : null}
      {mode === 'email' && !blocked ? (
        <div className={styles.fields}>
          {emailFields.map(({ label, placeholder, value, setValue }) => (
            <input
              key={label}
              className={styles.input}
              aria-label={label}
              placeholder={placeholder}
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          ))}
        </div>
      ) : null}
      <textarea
        ref={composerRef}
        className={styles.textarea}
        aria-label={mode === 'note' ? 'Internal note' : mode === 'email' ? 'Email message' : 'SMS message'}
        placeholder={
          mode === 'note'
            ? 'Internal note: only staff see this'
            : blocked
              ? ''
              : `Reply by ${mode === 'sms' ? 'text' : 'email'}…  (Ctrl+Enter sends)`
        }
        value={text}
        disabled={Boolean(blocked)}
        {...(mode === 'note' ? mentionBoxProps(mention) : {})}
        onSelect={(e) => mention.follow(e.currentTarget)}
        onChange={(e) => {
          setText(e.target.value);
          mention.follow(e.target);
          const slash = slashQuery(e.target);
          if (slash) picker.open({ query: slash.query, from: 'slash', range: { start: slash.start, end: slash.end } });
          else if (picker.state?.from === 'slash') picker.open(null);
        }}
        onPaste={(e) => {
          // A pasted picture (a screenshot, a copied image) is attached; pasted text stays text.
          const files = withPictures ? imageFiles(e.clipboardData.files) : [];
          if (files.length === 0) return;
          e.preventDefault();
          pictures.add(files);
        }}
        onKeyDown={(e) => {
          if (picker.state?.from === 'slash' && picker.onKey(e)) return;
          if (mention.onKey(e, chooseMention)) return;
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            send();
          }
        }}
      />
      <SavedReplyPicker picker={picker} />
      <MentionList picker={mention} onChoose={chooseMention} />
      {withPictures ? <PicturePreviews state={pictures} /> : null}
      {unresolved.length ? (
        <p className={styles.disabledReason} role="note" data-testid="composer-unresolved">
          {unresolvedMessage(unresolved)}
        </p>
      ) : null}
      <div className={styles.composerRow}>
        <span aria-live="polite" data-testid="sms-counter">
          {count ? (
            <>
              {count.words ? (
                <span className={own.count} title={count.detail || undefined}>
                  {count.words}
                </span>
              ) : null}
              {count.warning ? <span className={own.countWarn}> ({count.warning})</span> : null}
            </>
          ) : mode === 'email' && !blocked ? (
            <label>
              <span className={styles.srOnly}>Attachments</span>
              <input
                key={fileInputKey}
                type="file"
                multiple
                aria-label="Attach files"
                onChange={async (e) => {
                  const files = [...(e.target.files ?? [])];
                  setLocalError(null);
                  // A file that cannot go is cleared from the input too, so what it shows is what is sent.
                  const refuse = (message: string) => {
                    setAttachments([]);
                    setFileInputKey((k) => k + 1);
                    setLocalError(message);
                  };
                  if (files.some((f) => f.size > MAX_ATTACHMENT_BYTES)) return refuse('Attachments are limited to 5 MB each.');
                  try {
                    setAttachments(await Promise.all(files.map(readAttachment)));
                  } catch {
                    refuse('Could not read the attachment.');
                  }
                }}
              />
            </label>
          ) : mode === 'note' ? (
            'Visible to staff only'
          ) : null}
        </span>
        <button
          type="button"
          className={`${styles.button} ${styles.ghost}`}
          aria-expanded={picker.state?.from === 'button'}
          disabled={Boolean(blocked) || resolving}
          onClick={() => {
            const el = composerRef.current;
            const start = el?.selectionStart ?? text.length;
            picker.open(picker.state ? null : { query: '', from: 'button', range: { start, end: el?.selectionEnd ?? start } });
          }}
        >
          Saved replies
        </button>
        {withPictures ? <PictureAttachments state={pictures} /> : null}
        {mode !== 'note' && !blocked ? (
          <SendLaterPicker
            later={later}
            nowLabel={
              mode === 'sms' && quiet?.holds && !overrideQuietHours
                ? `When quiet hours end (${whenWords(quiet.timeZone, quiet.opensAt)})`
                : 'Now'
            }
          />
        ) : null}
        <button type="submit" className={`${styles.button} ${styles.primary}`} disabled={!canSend}>
          {action}
        </button>
      </div>
      {heldUntil && quiet && !blocked ? (
        <div
          className={styles.meta}
          data-testid="quiet-hours-notice"
          role="note"
          style={{ margin: 0, justifyContent: 'flex-start' }}
        >
          <span style={{ whiteSpace: 'normal' }}>
            Quiet hours: it&apos;s {quiet.localTime} for the client ({quiet.timeZone}; texts go {quiet.window}).{' '}
            {overrideQuietHours
              ? 'This text goes now, in their quiet hours.'
              : `This text waits until ${formatInZone(quiet.timeZone, heldUntil)} their time.`}
          </span>
          <label>
            <input type="checkbox" checked={overrideQuietHours} onChange={(e) => setOverrideQuietHours(e.target.checked)} /> Send
            now anyway, in the client&apos;s quiet hours
          </label>
        </div>
      ) : null}
      {sendAt && mode !== 'note' && !blocked ? (
        <div className={styles.meta} data-testid="send-later-summary" style={{ margin: 0, justifyContent: 'flex-start' }}>
          <span>
            Sends {formatInZone(later.timezone, sendAt)} ({later.timezone}).
          </span>
          <label>
            <input type="checkbox" checked={later.cancelOnReply} onChange={(e) => later.setCancelOnReply(e.target.checked)} />{' '}
            Cancel if the client replies first
          </label>
        </div>
      ) : null}
      <CollisionNotice guard={collision} busy={busy} onSendAnyway={() => send(true)} />
      {error ? (
        <p role="alert" className={styles.error} style={{ margin: 0, fontSize: 13 }}>
          {error}
        </p>
      ) : null}
    </form>
  );
}

/**
 * The client's quiet hours as the composer needs them: their clock and window from the server,
 * whether a text sent now would wait (window closed and the conversation not live), worked out in
 * the browser so the notice follows the clock.
 */
function useQuietHours(conversationId: number, enabled: boolean) {
  const query = trpc.inbox.quietHours.useQuery({ conversationId }, { enabled, staleTime: 60_000, refetchInterval: 60_000 });
  const q = query.data;
  if (!q) return null;
  const now = new Date();
  const window = { start: q.start, end: q.end };
  const minute = localMinute(q.time_zone, now);
  return {
    holds: !q.live && !windowOpen(q.time_zone, window, now),
    opensAt: nextOpening(q.time_zone, window, now),
    timeZone: q.time_zone,
    localTime: clockOf(minute),
    window: `${clockOf(q.start)}–${clockOf(q.end)}`,
  };
}

type LaterChoice = 'now' | 'tomorrow' | 'monday' | 'custom';

/** Send later's state: the choice, the custom time, cancel on reply, in the conversation's time zone. */
function useSendLater(conversationId: number) {
  const zone = trpc.inbox.sendLaterTimezone.useQuery({ conversationId }, { staleTime: 5 * 60_000 });
  const [choice, setChoice] = useState<LaterChoice>('now');
  const [custom, setCustom] = useState('');
  const [cancelOnReply, setCancelOnReply] = useState(true);
  let timezone = zone.data?.timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    timezone = 'UTC';
  }
  const picks = quickPicks(timezone);
  // Until the conversation's zone is known, "Tomorrow 9:00" would be 9:00 UTC: the picker waits
  // (an error falls back to UTC, which the summary names).
  const ready = !zone.isPending;
  const sendAt =
    choice === 'tomorrow'
      ? picks[0]!.at
      : choice === 'monday'
        ? picks[1]!.at
        : choice === 'custom'
          ? // A time already past is refused by the server (422), with its reason shown.
            fromLocalInput(timezone, custom)
          : null;
  return {
    timezone,
    ready,
    picks,
    choice,
    setChoice,
    custom,
    setCustom,
    cancelOnReply,
    setCancelOnReply,
    sendAt,
    reset: () => {
      setChoice('now');
      setCustom('');
      setCancelOnReply(true);
    },
  };
}

/** Now (or when the client's quiet hours end), the quick picks, or a chosen time (a datetime-local read in the conversation's zone). */
function SendLaterPicker({ later, nowLabel }: { later: ReturnType<typeof useSendLater>; nowLabel: string }) {
  return (
    <>
      <select
        aria-label="Send later"
        className={styles.input}
        style={{ width: 'auto' }}
        disabled={!later.ready}
        value={later.choice}
        onChange={(e) => later.setChoice(e.target.value as LaterChoice)}
      >
        <option value="now">{nowLabel}</option>
        <option value="tomorrow">{later.picks[0]!.label}</option>
        <option value="monday">{later.picks[1]!.label}</option>
        <option value="custom">Choose a time…</option>
      </select>
      {later.choice === 'custom' ? (
        <input
          type="datetime-local"
          aria-label={`Send at (${later.timezone})`}
          className={styles.input}
          style={{ width: 'auto' }}
          value={later.custom}
          onChange={(e) => later.setCustom(e.target.value)}
        />
      ) : null}
    </>
  );
}
