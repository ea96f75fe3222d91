'use client';
import { TRPCClientError } from '@trpc/client';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { trpc } from '@/components/trpc/client';
import { createVoiceDevice, elapsedSeconds, VoiceNotConfiguredError, type DialerState, type VoiceDevice } from './voice-device';

/**
 * React access to the tab's one dialer (components/voice/voice-device.ts).
 *
 * One `VoiceDevice` per browser tab, shared by every component using this hook: the call button in a
 * conversation, the dialer panel and the incoming-call toast all see the same state and the same call.
 * Mounting any of them starts it (token through tRPC `voice.token`, SDK, register); it stays registered
 * across client-side navigation so incoming calls keep ringing.
 *
 * Voice not set up: `voice.token` answers `{ configured: false }` (no failing request) → `not-configured`
 * ("Calling isn't set up for this business"; the missing settings are in the server log). A tRPC
 * SERVICE_UNAVAILABLE that is not the database means the same; anything else (network, session,
 * registration) → `offline`.
 */

type TrpcClient = ReturnType<typeof trpc.useUtils>['client'];

const IDLE: DialerState = { kind: 'idle' };

let shared: { device: VoiceDevice; client: TrpcClient | null } | null = null;

/** Maps a `voice.token` failure to `VoiceNotConfiguredError` when the server says voice is not set up. */
export function toVoiceTokenError(err: unknown): unknown {
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: string } | undefined)?.code;
    // SERVICE_UNAVAILABLE is also "Database unavailable": that one is a passing outage, not configuration.
    if (code === 'SERVICE_UNAVAILABLE' && !/database/i.test(err.message)) {
      return new VoiceNotConfiguredError();
    }
  }
  return err;
}

function sharedDevice(client: TrpcClient): VoiceDevice | null {
  if (typeof window === 'undefined') return null;
  if (!shared) {
    const holder: { device: VoiceDevice; client: TrpcClient | null } = {
      client,
      device: createVoiceDevice({
        async fetchToken() {
          if (!holder.client) throw new Error('no API client');
          let answer;
          try {
            answer = await holder.client.voice.token.query();
          } catch (err) {
            throw toVoiceTokenError(err);
          }
          if (!answer.configured) throw new VoiceNotConfiguredError();
          return answer.token;
        },
        async lookupCaller(from) {
          if (!holder.client) return null;
          const found = await holder.client.voice.clientForCaller.query({ phone: from });
          if (!found?.name) return null;
          return {
            clientName: found.name,
            clientId: String(found.clientId),
            ...(found.conversationId ? { conversationId: String(found.conversationId) } : {}),
          };
        },
      }),
    };
    shared = holder;
  }
  shared.client = client;
  return shared.device;
}

const noop = () => {};
const noopAsync = async () => {};

type Dialer = Pick<
  VoiceDevice,
  'start' | 'retry' | 'connect' | 'accept' | 'reject' | 'setMuted' | 'sendDigits' | 'hangUp' | 'dismiss'
> & {
  state: DialerState;
};

/** The shared dialer's state and actions. `autoStart` (default true) starts it on mount. */
export function useDialer({ autoStart = true }: { autoStart?: boolean } = {}): Dialer {
  const utils = trpc.useUtils();
  const device = sharedDevice(utils.client);
  const state = useSyncExternalStore(device ? device.subscribe : subscribeNothing, device ? device.getState : getIdle, getIdle);

  useEffect(() => {
    if (autoStart && device) void device.start();
  }, [autoStart, device]);

  if (!device) {
    return {
      state,
      start: noopAsync,
      retry: noopAsync,
      connect: noopAsync,
      accept: noop,
      reject: noop,
      setMuted: noop,
      sendDigits: noop,
      hangUp: noop,
      dismiss: noop,
    };
  }
  return {
    state,
    start: device.start,
    retry: device.retry,
    connect: device.connect,
    accept: device.accept,
    reject: device.reject,
    setMuted: device.setMuted,
    sendDigits: device.sendDigits,
    hangUp: device.hangUp,
    dismiss: device.dismiss,
  };
}

function subscribeNothing() {
  return noop;
}
function getIdle() {
  return IDLE;
}

/** Seconds since the call was answered, ticking once a second while in a call; 0 otherwise. */
export function useCallSeconds(state: DialerState): number {
  const since = state.kind === 'in-call' ? state.since : null;
  const [now, setNow] = useState(() => Date.now());
  // Until the first tick `now` predates the call (this mount, or the last call's final tick), and elapsedSeconds
  // floors that at 0, as a reading taken now would.
  useEffect(() => {
    if (since === null) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [since]);
  return since === null ? 0 : elapsedSeconds(since, now);
}
