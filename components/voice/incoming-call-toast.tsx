'use client';
import { useEffect, useId } from 'react';
import styles from './incoming-call-toast.module.css';
import { useCallSeconds, useDialer } from './use-dialer';
import { formatDuration } from './voice-device';

/**
 * Mount once per page (e.g. in the inbox layout, inside TrpcProvider). Mounting it starts the shared
 * dialer, so the browser is registered for incoming calls. Shows:
 * - an incoming call: the client's name (TwiML `ClientName` parameter, else looked up by number) with Accept/Reject;
 * - an answered incoming call: name, timer, Mute, Hang up (outgoing calls are controlled in the dialer panel);
 * - briefly, that the incoming call ended.
 */
export function IncomingCallToast() {
  const dialer = useDialer();
  const { state } = dialer;
  const seconds = useCallSeconds(state);
  const titleId = useId();

  const endedIncoming = state.kind === 'ended' && state.call?.direction === 'incoming';
  useEffect(() => {
    if (!endedIncoming) return;
    const timer = setTimeout(dialer.dismiss, 4000);
    return () => clearTimeout(timer);
  }, [endedIncoming, dialer.dismiss]);

  if (state.kind === 'incoming') {
    const who = state.clientName ?? state.from;
    return (
      <section className={styles.toast} role="region" aria-labelledby={titleId}>
        <p className={styles.label} id={titleId}>
          Incoming call
        </p>
        <p className={styles.name} role="alert">
          <span className={styles.srOnly}>Incoming call from </span>
          {who}
        </p>
        {state.clientName && <p className={styles.number}>{state.from}</p>}
        <div className={styles.actions}>
          <button type="button" className={styles.accept} onClick={dialer.accept} aria-label={`Accept call from ${who}`}>
            Accept
          </button>
          <button type="button" className={styles.reject} onClick={dialer.reject} aria-label={`Reject call from ${who}`}>
            Reject
          </button>
        </div>
      </section>
    );
  }

  const active = state.kind === 'connecting' || state.kind === 'ringing' || state.kind === 'in-call' ? state : null;
  if (active && active.call.direction === 'incoming') {
    const who = active.call.clientName ?? active.call.number;
    const inCall = active.kind === 'in-call';
    const muted = inCall && active.muted;
    return (
      <section className={styles.toast} role="region" aria-labelledby={titleId}>
        <p className={styles.label} id={titleId}>
          {inCall ? 'In call' : 'Connecting…'}
          {inCall && (
            <>
              {' · '}
              <span role="timer" aria-label="Call duration" className={styles.timer}>
                {formatDuration(seconds)}
              </span>
            </>
          )}
        </p>
        <p className={styles.name}>{who}</p>
        <div className={styles.actions}>
          <button
            type="button"
            className={styles.secondary}
            disabled={!inCall}
            aria-pressed={muted}
            aria-label={muted ? 'Unmute microphone' : 'Mute microphone'}
            onClick={() => dialer.setMuted(!muted)}
          >
            {muted ? 'Unmute' : 'Mute'}
          </button>
          <button type="button" className={styles.reject} onClick={dialer.hangUp} aria-label={`Hang up call with ${who}`}>
            Hang up
          </button>
        </div>
      </section>
    );
  }

  if (state.kind === 'ended' && endedIncoming) {
    const who = state.call?.clientName ?? state.call?.number ?? 'caller';
    return (
      <section className={styles.toast} role="region" aria-labelledby={titleId}>
        <p className={styles.label} id={titleId} role="status">
          Call with {who} ended
          {state.durationSeconds !== undefined ? ` · ${formatDuration(state.durationSeconds)}` : ''}
        </p>
        <div className={styles.actions}>
          <button type="button" className={styles.secondary} onClick={dialer.dismiss} aria-label="Dismiss">
            Dismiss
          </button>
        </div>
      </section>
    );
  }

  return null;
}
