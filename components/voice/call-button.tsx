'use client';
import { useId, useRef, useState } from 'react';
import styles from './call-button.module.css';
import { DialerPanel } from './dialer-panel';
import { useDialer } from './use-dialer';
import { CALLING_NOT_SET_UP } from './voice-device';

type CallButtonProps = {
  /** The client's phone (E.164); without one the button is disabled and says why. */
  phoneNumber: string | null | undefined;
  clientId: number | string;
  clientName: string | null | undefined;
  className?: string;
};

/**
 * "Call" in a conversation header: opens the dialer panel prefilled with the client's number.
 * Disabled, with the reason shown next to it, when the client has no phone or voice is not configured.
 * When voice is offline the panel still opens and says so ("Voice offline: …") with a Retry button.
 */
export function CallButton({ phoneNumber: phone, clientId, clientName, className }: CallButtonProps) {
  const { state } = useDialer();
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelId = useId();
  const reasonId = useId();
  const name = clientName?.trim() || phone || 'client';

  const disabledReason = !phone ? 'No phone number for this client' : state.kind === 'not-configured' ? CALLING_NOT_SET_UP : null;
  const showReason = disabledReason !== null && !open;
  const live = state.kind === 'connecting' || state.kind === 'ringing' || state.kind === 'in-call';

  function close() {
    setOpen(false);
    buttonRef.current?.focus();
  }

  return (
    <div className={[styles.wrap, className].filter(Boolean).join(' ')}>
      <button
        ref={buttonRef}
        type="button"
        className={styles.button}
        data-live={live || undefined}
        disabled={disabledReason !== null && !open}
        aria-label={`Call ${name}`}
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={open ? panelId : undefined}
        aria-describedby={showReason ? reasonId : undefined}
        onClick={() => setOpen((o) => !o)}
      >
        <svg className={styles.icon} viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" focusable="false">
          <path
            fill="currentColor"
            d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.46.57 3.6a1 1 0 0 1-.25 1z"
          />
        </svg>
        Call
      </button>
      {showReason && (
        <span
          id={reasonId}
          role="status"
          className={styles.reason}
          title={state.kind === 'not-configured' ? state.reason : undefined}
        >
          {disabledReason}
        </span>
      )}
      {open && (
        <div className={styles.popover}>
          <DialerPanel id={panelId} defaultNumber={phone} clientId={clientId} clientName={clientName} onClose={close} />
        </div>
      )}
    </div>
  );
}
