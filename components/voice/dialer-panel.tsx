'use client';
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import styles from './dialer-panel.module.css';
import { useCallSeconds, useDialer } from './use-dialer';
import { canCall, describeState, formatDuration, isBusy } from './voice-device';

const KEYS: { key: string; label: string; letters?: string }[] = [
  { key: '1', label: '1' },
  { key: '2', label: '2', letters: 'ABC' },
  { key: '3', label: '3', letters: 'DEF' },
  { key: '4', label: '4', letters: 'GHI' },
  { key: '5', label: '5', letters: 'JKL' },
  { key: '6', label: '6', letters: 'MNO' },
  { key: '7', label: '7', letters: 'PQRS' },
  { key: '8', label: '8', letters: 'TUV' },
  { key: '9', label: '9', letters: 'WXYZ' },
  { key: '*', label: 'star' },
  { key: '0', label: '0', letters: '+' },
  { key: '#', label: 'pound' },
];

type DialerPanelProps = {
  /** Prefills the number field (the conversation's client phone, E.164). */
  defaultNumber?: string | null;
  /** Passed to the TwiML app as `ClientId` when the dialled number is still `defaultNumber`. */
  clientId?: number | string | null;
  clientName?: string | null;
  /** The element id (for the opener's aria-controls). */
  id?: string;
  /** Shows a close button and closes on Escape. */
  onClose?: () => void;
  className?: string;
};

const sameNumber = (a: string, b: string) => a.replace(/[^\d+*#]/g, '') === b.replace(/[^\d+*#]/g, '');

/**
 * Keypad, number field, call/hang-up, mute, timer and a status line, over the tab's shared dialer.
 * Usable on its own (e.g. a "Dialer" page) or as the call button's popover.
 */
export function DialerPanel({ defaultNumber, clientId, clientName, id, onClose, className }: DialerPanelProps) {
  const dialer = useDialer();
  const { state } = dialer;
  const seconds = useCallSeconds(state);
  const [number, setNumber] = useState(defaultNumber ?? '');
  const [sentDigits, setSentDigits] = useState('');
  const inputRef = useRef<HTMLInputElement>(null);
  const headingId = useId();
  const numberId = useId();

  useEffect(() => {
    inputRef.current?.focus();
  }, []);

  const busy = isBusy(state);
  const inCall = state.kind === 'in-call';
  // The tones sent belong to the call: gone once it is over (adjusting state while rendering, not in an effect).
  if (!inCall && sentDigits !== '') setSentDigits('');
  const activeCall = state.kind === 'connecting' || state.kind === 'ringing' || state.kind === 'in-call' ? state.call : null;
  const shownNumber = activeCall ? activeCall.number : state.kind === 'incoming' ? state.from : number;
  const matchesClient = !!defaultNumber && sameNumber(number, defaultNumber);
  const target = matchesClient && clientName ? clientName : number.trim() || 'number';
  const callable = canCall(state) && number.trim().length > 0;

  function press(key: string) {
    if (inCall) {
      dialer.sendDigits(key);
      setSentDigits((d) => (d + key).slice(-24));
    } else if (!busy) {
      setNumber((n) => n + key);
    }
  }

  function call() {
    if (!callable) return;
    void dialer.connect({
      To: number.trim(),
      ...(matchesClient && clientId != null ? { ClientId: clientId } : {}),
      ...(matchesClient && clientName ? { clientName } : {}),
    });
  }

  function onKeyDown(e: KeyboardEvent<HTMLElement>) {
    if (e.key === 'Escape' && onClose) {
      e.stopPropagation();
      onClose();
    }
  }

  const unavailable = state.kind === 'not-configured' || state.kind === 'offline';

  return (
    <section
      id={id}
      role={onClose ? 'dialog' : 'region'}
      aria-labelledby={headingId}
      className={[styles.panel, className].filter(Boolean).join(' ')}
      onKeyDown={onKeyDown}
    >
      <div className={styles.head}>
        <h2 id={headingId} className={styles.title}>
          Dialer
        </h2>
        {onClose && (
          <button type="button" className={styles.close} onClick={onClose} aria-label="Close dialer">
            ×
          </button>
        )}
      </div>

      <div className={styles.statusRow} data-state={state.kind}>
        <p role="status" className={styles.status}>
          {describeState(state)}
        </p>
        {inCall && (
          <span role="timer" aria-label="Call duration" className={styles.timer}>
            {formatDuration(seconds)}
          </span>
        )}
        {state.kind === 'ended' && state.durationSeconds !== undefined && (
          <span className={styles.timer} aria-label={`Call lasted ${formatDuration(state.durationSeconds)}`}>
            {formatDuration(state.durationSeconds)}
          </span>
        )}
      </div>
      {state.kind === 'not-configured' && state.reason && state.reason !== describeState(state) && (
        <p className={styles.detail}>{state.reason}</p>
      )}

      <form
        className={styles.numberRow}
        onSubmit={(e) => {
          e.preventDefault();
          call();
        }}
      >
        <label htmlFor={numberId} className={styles.srOnly}>
          Phone number
        </label>
        <input
          ref={inputRef}
          id={numberId}
          className={styles.number}
          type="tel"
          inputMode="tel"
          autoComplete="off"
          placeholder="+1 415 555 0123"
          value={shownNumber}
          readOnly={busy}
          aria-readonly={busy}
          onChange={(e) => setNumber(e.target.value.replace(/[^\d+*#() .-]/g, ''))}
        />
        <button
          type="button"
          className={styles.backspace}
          aria-label="Delete last digit"
          disabled={busy || number.length === 0}
          onClick={() => setNumber((n) => n.slice(0, -1))}
        >
          ⌫
        </button>
      </form>

      <div className={styles.keypad} role="group" aria-label={inCall ? 'Keypad (sends tones)' : 'Keypad'}>
        {KEYS.map((k) => (
          <button
            key={k.key}
            type="button"
            className={styles.key}
            aria-label={inCall ? `Send tone ${k.label}` : `Dial ${k.label}`}
            disabled={busy && !inCall}
            onClick={() => press(k.key)}
          >
            <span className={styles.digit} aria-hidden="true">
              {k.key}
            </span>
            {k.letters && (
              <span className={styles.letters} aria-hidden="true">
                {k.letters}
              </span>
            )}
          </button>
        ))}
      </div>
      {sentDigits && (
        <p className={styles.detail} aria-live="polite">
          Tones sent: {sentDigits}
        </p>
      )}

      <div className={styles.actions}>
        {state.kind === 'incoming' ? (
          (
            [
              ['Accept', styles.primary, dialer.accept],
              ['Reject', styles.danger, dialer.reject],
            ] as const
          ).map(([verb, className, onClick]) => (
            <button
              key={verb}
              type="button"
              className={className}
              onClick={onClick}
              aria-label={`${verb} call from ${state.clientName ?? state.from}`}
            >
              {verb}
            </button>
          ))
        ) : busy ? (
          <>
            <button type="button" className={styles.danger} onClick={dialer.hangUp} aria-label="Hang up">
              Hang up
            </button>
            <button
              type="button"
              className={styles.secondary}
              disabled={!inCall}
              aria-pressed={inCall ? state.muted : false}
              aria-label={inCall && state.muted ? 'Unmute microphone' : 'Mute microphone'}
              onClick={() => inCall && dialer.setMuted(!state.muted)}
            >
              {inCall && state.muted ? 'Unmute' : 'Mute'}
            </button>
          </>
        ) : unavailable ? (
          <button
            type="button"
            className={styles.secondary}
            onClick={() => void dialer.retry()}
            aria-label={state.kind === 'offline' ? 'Retry connecting to voice' : 'Check voice configuration again'}
          >
            Retry
          </button>
        ) : (
          <button type="button" className={styles.primary} disabled={!callable} onClick={call} aria-label={`Call ${target}`}>
            Call
          </button>
        )}
      </div>
    </section>
  );
}
