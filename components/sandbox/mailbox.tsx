'use client';
import { useState, type ChangeEvent, type FormEvent } from 'react';
import { trpc } from '@/components/trpc/client';
import { MAX_ATTACHMENT_BYTES } from '@/server/shared/limits';
import {
  clientLabel,
  errorText,
  fileSize,
  isBadStatus,
  isGoodStatus,
  shortTime,
  statusLabel,
  type MailItem,
  type SandboxClient,
} from './format';
import styles from './sandbox.module.css';

type Attachment = { filename: string; contentType: string; contentBase64: string; size: number };

/**
 * The client's mailbox: every email between them and the business (newest first), one open at a
 * time, and a reply form (subject, text, optional HTML and one attachment) that posts an Inbound
 * Parse webhook threaded to the business's email.
 */
export function Mailbox({ client }: { client: SandboxClient }) {
  const box = trpc.sandbox.mailbox.useQuery({ clientId: client.clientId }, { refetchInterval: 3_000, staleTime: 1_000 });
  const [openId, setOpenId] = useState<number | null>(null);
  const emails = box.data?.emails ?? [];
  const open = emails.find((e) => e.id === openId) ?? null;

  if (box.isPending) {
    return (
      <p className={styles.state} role="status">
        Loading emails…
      </p>
    );
  }
  if (box.error && !box.data) {
    return (
      <div className={styles.error} role="alert">
        Could not load the mailbox: {errorText(box.error)}
        <button type="button" className={styles.button} onClick={() => box.refetch()}>
          Retry
        </button>
      </div>
    );
  }
  return (
    <div className={styles.mailbox}>
      <ul className={styles.mailList} aria-label="Emails">
        {emails.length === 0 ? <li className={styles.state}>No emails yet.</li> : null}
        {emails.map((e) => (
          <li key={e.id}>
            <button
              type="button"
              className={styles.mailRow}
              aria-pressed={e.id === openId}
              onClick={() => setOpenId(e.id === openId ? null : e.id)}
            >
              <span className={styles.mailSubject}>{e.subject || '(no subject)'}</span>
              <span className={styles.clientWhen}>{shortTime(e.sentAt)}</span>
              <span className={styles.mailMeta}>
                <span className={`${styles.tag} ${e.direction === 'inbound' ? styles.tagOut : styles.tagIn}`}>
                  {e.direction === 'inbound' ? 'Sent' : 'Inbox'}
                </span>
                {e.direction === 'inbound' ? `to ${e.to ?? ''}` : `${statusLabel(e.status)} · from ${e.from ?? ''}`}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <div className={styles.reader}>
        {open ? (
          <OpenEmail email={open} />
        ) : (
          <p className={`${styles.muted} ${styles.small}`}>{emails.length ? 'Open an email to read it, or write below.' : ''}</p>
        )}
        <ReplyForm
          client={client}
          answering={open?.direction === 'outbound' ? open : null}
          businessAddress={box.data?.businessAddress ?? null}
          lastSubject={emails.find((e) => e.direction === 'outbound')?.subject ?? null}
        />
        {box.error ? (
          <div className={`${styles.muted} ${styles.small}`} role="status">
            Could not refresh: {errorText(box.error)}
          </div>
        ) : null}
      </div>
    </div>
  );
}

/** A sandboxed frame without scripts whose CSP blocks every remote load. */
function htmlDocument(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data: cid:; style-src 'unsafe-inline'"><style>body{font-family:system-ui,sans-serif;font-size:13px;margin:10px;color:#1f2937}</style></head><body>${html}</body></html>`;
}

function OpenEmail({ email: e }: { email: MailItem }) {
  const [view, setView] = useState<'html' | 'text'>(e.html ? 'html' : 'text');
  const outbound = e.direction === 'outbound';
  const tone = !outbound ? '' : isBadStatus(e.status) ? styles.statusBad : isGoodStatus(e.status) ? styles.statusGood : '';
  return (
    <article className={styles.mailArticle} aria-label="Open email">
      <h3 className={styles.mailHeadline}>{e.subject || '(no subject)'}</h3>
      <dl className={styles.mailHeaders}>
        <dt>From</dt>
        <dd>
          {e.from}
          {outbound && e.staffName ? ` (${e.staffName})` : ''}
        </dd>
        <dt>To</dt>
        <dd>
          {e.to}
          {e.cc?.length ? `, cc ${e.cc.join(', ')}` : ''}
        </dd>
        <dt>Date</dt>
        <dd>{new Date(e.sentAt).toLocaleString()}</dd>
        <dt>Status</dt>
        <dd className={tone}>
          {outbound ? statusLabel(e.status) : 'Sent by the client'}
          {e.errorCode || e.errorMessage ? ` (${[e.errorCode, e.errorMessage].filter(Boolean).join(': ')})` : ''}
        </dd>
        {e.emailMessageId ? (
          <>
            <dt>Msg-ID</dt>
            <dd className={styles.mono}>{e.emailMessageId}</dd>
          </>
        ) : null}
      </dl>
      {e.html ? (
        <div className={styles.viewToggle} role="group" aria-label="Email view">
          <button type="button" className={styles.button} aria-pressed={view === 'html'} onClick={() => setView('html')}>
            HTML
          </button>
          <button type="button" className={styles.button} aria-pressed={view === 'text'} onClick={() => setView('text')}>
            Text
          </button>
        </div>
      ) : null}
      {view === 'html' && e.html ? (
        <iframe className={styles.mailFrame} title="Email HTML" sandbox="" srcDoc={htmlDocument(e.html)} />
      ) : (
        <pre className={styles.mailText}>{e.text || '(no text)'}</pre>
      )}
      {e.attachments.length ? (
        <ul className={styles.attachments} aria-label="Attachments">
          {e.attachments.map((a, i) => (
            <li key={i}>
              📎 {a.filename} {a.size !== null ? <span className={styles.muted}>({fileSize(a.size)})</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </article>
  );
}

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error ?? new Error('Could not read the file'));
    reader.readAsDataURL(file);
  });
}

function ReplyForm({
  client,
  answering,
  businessAddress,
  lastSubject,
}: {
  client: SandboxClient;
  answering: MailItem | null;
  businessAddress: string | null;
  lastSubject: string | null;
}) {
  const utils = trpc.useUtils();
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const [html, setHtml] = useState('');
  const [attachment, setAttachment] = useState<Attachment | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const send = trpc.sandbox.replyEmail.useMutation({
    onSuccess: () => {
      setSubject('');
      setText('');
      setHtml('');
      setAttachment(null);
      setFileKey((k) => k + 1);
      void utils.sandbox.mailbox.invalidate({ clientId: client.clientId });
      void utils.sandbox.clients.invalidate();
    },
  });
  const name = clientLabel(client);
  const baseSubject = answering?.subject ?? lastSubject;
  const defaultSubject = baseSubject ? `Re: ${baseSubject.replace(/^(re:\s*)+/i, '')}` : '(no subject)';

  const onFile = async (e: ChangeEvent<HTMLInputElement>) => {
    setFileError(null);
    const file = e.target.files?.[0];
    if (!file) return setAttachment(null);
    if (file.size > MAX_ATTACHMENT_BYTES) {
      setAttachment(null);
      setFileError('The attachment is over 5 MB.');
      return;
    }
    try {
      setAttachment({
        filename: file.name,
        contentType: file.type || 'application/octet-stream',
        contentBase64: await readAsBase64(file),
        size: file.size,
      });
    } catch (err) {
      setFileError((err as Error).message);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!text.trim() || send.isPending) return;
    send.mutate({
      clientId: client.clientId,
      subject: subject.trim() || undefined,
      text,
      html: html.trim() || null,
      attachment: attachment
        ? { filename: attachment.filename, contentType: attachment.contentType, contentBase64: attachment.contentBase64 }
        : null,
      replyToMessageId: answering?.id,
    });
  };
  const canWrite = Boolean(client.email) && Boolean(businessAddress);
  /** A text field of the form: controlled by its state, disabled while there is no one to write to. */
  const bind = (value: string, setValue: (value: string) => void) => ({
    value,
    onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setValue(e.target.value),
    disabled: !canWrite,
  });

  return (
    <form className={styles.replyForm} onSubmit={submit} aria-label="Email reply">
      <h3>
        {answering ? 'Reply' : 'Write'} as {name}
        <span className={`${styles.muted} ${styles.small}`}>
          {' '}
          {client.email ?? 'no email address'} → {businessAddress ?? 'the business has no email address'}
        </span>
      </h3>
      <label className={styles.label} htmlFor="sandbox-subject">
        Subject
      </label>
      <input
        id="sandbox-subject"
        className={styles.input}
        aria-label="Subject"
        placeholder={defaultSubject}
        maxLength={998}
        {...bind(subject, setSubject)}
      />
      <label className={styles.label} htmlFor="sandbox-body">
        Message
      </label>
      <textarea id="sandbox-body" className={styles.textarea} aria-label="Email body" rows={5} {...bind(text, setText)} />
      <details>
        <summary className={`${styles.small} ${styles.muted}`}>HTML body and attachment (for testing)</summary>
        <label className={styles.label} htmlFor="sandbox-html">
          HTML body (optional)
        </label>
        <textarea
          id="sandbox-html"
          className={`${styles.textarea} ${styles.mono}`}
          aria-label="HTML body (optional)"
          rows={4}
          placeholder="<p>Hello</p>"
          {...bind(html, setHtml)}
        />
        <label className={styles.label} htmlFor="sandbox-file">
          Attachment (optional, up to 5 MB)
        </label>
        <input
          key={fileKey}
          id="sandbox-file"
          type="file"
          aria-label="Attachment (optional)"
          onChange={onFile}
          disabled={!canWrite}
        />
        {attachment ? (
          <span className={`${styles.small} ${styles.muted}`}>
            {' '}
            {attachment.filename} ({fileSize(attachment.size)})
          </span>
        ) : null}
        {fileError ? (
          <div className={styles.error} role="alert">
            {fileError}
          </div>
        ) : null}
      </details>
      <div className={styles.replyActions}>
        <button
          type="submit"
          className={`${styles.button} ${styles.primary}`}
          aria-label="Send email reply"
          disabled={!canWrite || !text.trim() || send.isPending}
        >
          {send.isPending ? 'Sending…' : 'Send email'}
        </button>
        {answering ? (
          <span className={`${styles.small} ${styles.muted}`}>Threads to “{answering.subject || '(no subject)'}”</span>
        ) : null}
        {send.isSuccess && !send.data.messageId ? (
          <span className={`${styles.small} ${styles.muted}`}>
            Posted; the webhook stored it but made no message (see the server log).
          </span>
        ) : null}
      </div>
      {send.error ? (
        <div className={styles.error} role="alert">
          Not sent: {errorText(send.error)}
        </div>
      ) : null}
    </form>
  );
}
