/**
 * The browser dialer's engine: the ONLY module that touches `@twilio/voice-sdk` (docs/providers.md#access-token).
 *
 * Framework-free. `createVoiceDevice({ fetchToken })` returns a small object that
 * - fetches a token, loads the SDK with a dynamic `import()` (never on the server, not in the first
 *   load), builds a `Device`, registers it (to receive calls) and refreshes the token on
 *   `tokenWillExpire`;
 * - places calls (`connect({ To, ClientId })`), accepts/rejects incoming ones, mutes, sends DTMF, hangs up;
 * - publishes one `DialerState` to subscribers (`subscribe`/`getState`, shaped for `useSyncExternalStore`).
 *
 * Test/dev seam: the SDK is whatever `VoiceSdk` object is found first among
 *   1. `options.loadSdk()` (unit tests inject a fake here),
 *   2. `window.__voiceSdkOverride` (Playwright: `page.addInitScript(() => { window.__voiceSdkOverride = { Device: FakeDevice } })`),
 *   3. `import('@twilio/voice-sdk')`.
 * A fake only needs the few members of `SdkDevice`/`SdkCall` below (an EventEmitter-like `on`).
 */

// ---------------------------------------------------------------------------------------------
// State

/** The call the dialer is busy with. */
type CallInfo = {
  direction: 'outgoing' | 'incoming';
  /** E.164 number (outgoing: what was dialled; incoming: the caller). */
  number: string;
  clientId?: string;
  clientName?: string;
  /** Incoming calls: the TwiML's `ConversationId` parameter (or the caller lookup's). */
  conversationId?: string;
};

export type DialerState =
  /** Nothing started yet (also the server-render snapshot). */
  | { kind: 'idle' }
  /** Fetching the token, loading the SDK, registering with Twilio. */
  | { kind: 'starting' }
  | { kind: 'not-configured'; reason: string }
  | { kind: 'offline'; reason: string }
  | { kind: 'ready' }
  | { kind: 'connecting'; call: CallInfo }
  | { kind: 'ringing'; call: CallInfo }
  | { kind: 'in-call'; since: number; muted: boolean; call: CallInfo }
  | { kind: 'incoming'; from: string; clientName?: string; clientId?: string; conversationId?: string }
  | { kind: 'ended'; durationSeconds?: number; reason?: string; call?: CallInfo };

/** States in which a call exists (and another cannot be placed). */
export function isBusy(state: DialerState): boolean {
  return state.kind === 'connecting' || state.kind === 'ringing' || state.kind === 'in-call' || state.kind === 'incoming';
}

/** States from which a new outgoing call can be placed. */
export function canCall(state: DialerState): boolean {
  return state.kind === 'ready' || state.kind === 'ended';
}

/** `mm:ss`, or `h:mm:ss` from one hour; negative or non-finite input counts as 0. */
export function formatDuration(totalSeconds: number): string {
  const s = Number.isFinite(totalSeconds) && totalSeconds > 0 ? Math.floor(totalSeconds) : 0;
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const mmss = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}`;
  return hours > 0 ? `${hours}:${mmss}` : mmss;
}

/** Whole seconds between `since` and `now` (epoch ms), never negative. */
export function elapsedSeconds(since: number, now: number): number {
  return Math.max(0, Math.floor((now - since) / 1000));
}

/** One line for screen readers and the panel. Stable prefixes: "Voice offline: ", "Calling isn't set up". */
export function describeState(state: DialerState): string {
  switch (state.kind) {
    case 'idle':
    case 'starting':
      return 'Starting voice…';
    case 'not-configured':
      return CALLING_NOT_SET_UP;
    case 'offline':
      return `Voice offline: ${state.reason}`;
    case 'ready':
      return 'Ready to call';
    case 'connecting':
      return state.call.direction === 'incoming' ? 'Connecting…' : `Calling ${state.call.clientName ?? state.call.number}…`;
    case 'ringing':
      return `Ringing ${state.call.clientName ?? state.call.number}…`;
    case 'in-call':
      return `In call with ${state.call.clientName ?? state.call.number}${state.muted ? ' (muted)' : ''}`;
    case 'incoming':
      return `Incoming call from ${state.clientName ?? state.from}`;
    case 'ended':
      return state.reason ? `Call ended: ${state.reason}` : 'Call ended';
  }
}

/**
 * What staff read when voice is not set up: no setting names (those are for developers, in the
 * server log), and what to do about it.
 */
export const CALLING_NOT_SET_UP = "Calling isn't set up for this business";
export const CALLING_NOT_SET_UP_HELP = 'Ask whoever manages your account to set up calling; texts and email work as usual.';

/** Thrown by `fetchToken` when the server says voice is not set up. */
export class VoiceNotConfiguredError extends Error {
  constructor(message = CALLING_NOT_SET_UP_HELP) {
    super(message);
    this.name = 'VoiceNotConfiguredError';
  }
}

// ---------------------------------------------------------------------------------------------
// The part of @twilio/voice-sdk we use (the real classes satisfy these structurally; fakes implement them).

// Each event passes its own payload, so each listener declares its own parameters. A method's parameters are
// checked bivariantly, which lets a listener narrow `unknown` (as the SDK's EventEmitter, whose listeners take any[]).
type Listener = { listener(...args: unknown[]): void }['listener'];

interface SdkEmitter {
  on(event: string, listener: Listener): unknown;
  removeAllListeners(event?: string): unknown;
}

export interface SdkCall extends SdkEmitter {
  /** Twilio's call parameters: `From`, `To`, `CallSid`… (incoming: `From` is the caller). */
  readonly parameters: Record<string, string>;
  /** `<Parameter>`s of the TwiML `<Client>` (incoming) or our connect params (outgoing). */
  readonly customParameters: Map<string, string>;
  accept(): void;
  reject(): void;
  disconnect(): void;
  mute(shouldMute?: boolean): void;
  isMuted(): boolean;
  sendDigits(digits: string): void;
}

export interface SdkDevice extends SdkEmitter {
  readonly state: string;
  register(): Promise<void>;
  connect(options?: { params?: Record<string, string> }): Promise<SdkCall>;
  updateToken(token: string): void;
  disconnectAll(): void;
  destroy(): void;
}

export interface SdkDeviceOptions {
  closeProtection?: boolean | string;
  tokenRefreshMs?: number;
}

export interface VoiceSdk {
  Device: { new (token: string, options?: SdkDeviceOptions): SdkDevice; readonly isSupported: boolean };
}

declare global {
  interface Window {
    /** Test/dev seam: replaces `@twilio/voice-sdk` for the dialer (see components/voice/voice-device.ts). */
    __voiceSdkOverride?: VoiceSdk;
  }
}

async function defaultLoadSdk(): Promise<VoiceSdk> {
  if (typeof window === 'undefined') throw new Error('the voice library only runs in a browser');
  if (window.__voiceSdkOverride) return window.__voiceSdkOverride;
  const sdk: VoiceSdk = await import('@twilio/voice-sdk');
  return sdk;
}

// ---------------------------------------------------------------------------------------------
// Network (navigator.onLine and the window's online/offline events by default)

export interface NetworkWatch {
  isOnline(): boolean;
  /** Calls back on changes; returns the unsubscribe function. */
  subscribe(onChange: (online: boolean) => void): () => void;
}

const browserNetwork: NetworkWatch = {
  isOnline: () => (typeof navigator === 'undefined' ? true : navigator.onLine !== false),
  subscribe(onChange) {
    if (typeof window === 'undefined') return () => {};
    const online = () => onChange(true);
    const offline = () => onChange(false);
    window.addEventListener('online', online);
    window.addEventListener('offline', offline);
    return () => {
      window.removeEventListener('online', online);
      window.removeEventListener('offline', offline);
    };
  },
};

// ---------------------------------------------------------------------------------------------
// The device

type CallerLookup = (from: string) => Promise<{ clientName?: string; clientId?: string; conversationId?: string } | null>;

export type VoiceDeviceOptions = {
  /** Returns a fresh access token; throws `VoiceNotConfiguredError` when voice is not set up. */
  fetchToken: () => Promise<string>;
  /** Resolves an incoming caller's number to a client when the TwiML passed no `ClientName`. */
  lookupCaller?: CallerLookup;
  /** The SDK to use (tests); default: `window.__voiceSdkOverride`, else `import('@twilio/voice-sdk')`. */
  loadSdk?: () => Promise<VoiceSdk>;
  /** Registration that has not finished by then counts as offline (default 10 s). */
  registerTimeoutMs?: number;
  network?: NetworkWatch;
  now?: () => number;
};

type ConnectParams = { To: string; ClientId?: string | number; clientName?: string };

export interface VoiceDevice {
  getState(): DialerState;
  subscribe(listener: (state: DialerState) => void): () => void;
  /** Token → SDK → Device → register. Idempotent: does nothing unless idle, offline or not configured. */
  start(): Promise<void>;
  /** Tears the Device down and starts again (the offline state's "Retry"). */
  retry(): Promise<void>;
  /** Places a call (from `ready` or `ended`); the TwiML app receives `To` and `ClientId`. */
  connect(params: ConnectParams): Promise<void>;
  accept(): void;
  reject(): void;
  setMuted(muted: boolean): void;
  /** DTMF during a call: digits, `*`, `#` (and `w` for a half-second pause). */
  sendDigits(digits: string): void;
  hangUp(): void;
  /** `ended` → `ready`. */
  dismiss(): void;
  destroy(): void;
}

const CONNECTION_ERROR = /^(31000|31003|31005|31009|53\d{3})$/;
const TOKEN_ERROR = new Set([20101, 20104, 31204, 31205]);
const DTMF = /^[0-9*#w]+$/;

type TwilioLikeError = { code?: unknown; message?: unknown; description?: unknown };

/** A short human reason for an SDK or fetch error. */
function describeError(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as TwilioLikeError;
    const code = typeof e.code === 'number' ? e.code : undefined;
    if (code !== undefined && CONNECTION_ERROR.test(String(code))) return `cannot reach Twilio (${code})`;
    if (code === 31401 || code === 31208 || (err as Error).name === 'NotAllowedError') return 'microphone permission denied';
    const text =
      typeof e.description === 'string' && e.description ? e.description : typeof e.message === 'string' ? e.message : '';
    if (text) return code !== undefined && !text.includes(String(code)) ? `${text} (${code})` : text;
  }
  return typeof err === 'string' && err ? err : 'unknown error';
}

function errorCode(err: unknown): number | undefined {
  const code = err && typeof err === 'object' ? (err as TwilioLikeError).code : undefined;
  return typeof code === 'number' ? code : undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

export function createVoiceDevice(options: VoiceDeviceOptions): VoiceDevice {
  const loadSdk = options.loadSdk ?? defaultLoadSdk;
  const network = options.network ?? browserNetwork;
  const now = options.now ?? Date.now;
  const registerTimeoutMs = options.registerTimeoutMs ?? 10_000;

  let state: DialerState = { kind: 'idle' };
  const listeners = new Set<(s: DialerState) => void>();
  let device: SdkDevice | null = null;
  let call: SdkCall | null = null;
  let callInfo: CallInfo | null = null;
  /** Bumped on every teardown, so late async results of an older attempt are dropped. */
  let generation = 0;
  let starting: Promise<void> | null = null;
  let unwatchNetwork: (() => void) | null = null;

  function set(next: DialerState) {
    state = next;
    for (const l of [...listeners]) l(state);
  }

  /** Device-level trouble: only shown when no call is in progress (a live call has its own events). */
  function goOffline(reason: string) {
    if (!isBusy(state)) set({ kind: 'offline', reason });
  }

  function teardown() {
    generation++;
    starting = null;
    const d = device;
    const c = call;
    device = null;
    call = null;
    callInfo = null;
    if (c) c.removeAllListeners();
    if (d) {
      d.removeAllListeners();
      try {
        d.disconnectAll();
        d.destroy();
      } catch {
        // already destroyed
      }
    }
  }

  function watchNetwork() {
    if (unwatchNetwork) return;
    unwatchNetwork = network.subscribe((online) => {
      if (!online) goOffline('no network connection');
      else if (state.kind === 'offline') void retry();
    });
  }

  async function refreshToken(gen: number) {
    try {
      const token = await options.fetchToken();
      if (gen !== generation || !device) return;
      device.updateToken(token);
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof VoiceNotConfiguredError) {
        if (!isBusy(state)) set({ kind: 'not-configured', reason: err.message });
      } else {
        goOffline(`could not refresh the voice token (${describeError(err)})`);
      }
    }
  }

  function finishCall(c: SdkCall, reason?: string) {
    if (call !== c) return;
    const info = callInfo ?? undefined;
    const before = state;
    c.removeAllListeners();
    call = null;
    callInfo = null;
    // An incoming call that was never answered (rejected here, or the caller gave up) leaves no "ended" screen.
    if (before.kind === 'incoming') {
      set(device ? { kind: 'ready' } : { kind: 'offline', reason: 'disconnected' });
      return;
    }
    const durationSeconds = before.kind === 'in-call' ? elapsedSeconds(before.since, now()) : undefined;
    set({
      kind: 'ended',
      ...(durationSeconds !== undefined ? { durationSeconds } : {}),
      ...(reason ? { reason } : {}),
      ...(info ? { call: info } : {}),
    });
  }

  function attachCall(c: SdkCall, info: CallInfo) {
    call = c;
    callInfo = info;
    // callInfo, not `info`: an incoming caller's name may be looked up after the call arrived.
    c.on('ringing', () => {
      if (call === c && state.kind === 'connecting') set({ kind: 'ringing', call: callInfo ?? info });
    });
    c.on('accept', () => {
      if (call === c) set({ kind: 'in-call', since: now(), muted: c.isMuted(), call: callInfo ?? info });
    });
    c.on('mute', (muted: boolean) => {
      if (call === c && state.kind === 'in-call' && state.muted !== !!muted) set({ ...state, muted: !!muted });
    });
    c.on('disconnect', () => finishCall(c));
    c.on('cancel', () => finishCall(c));
    c.on('reject', () => finishCall(c, info.direction === 'outgoing' ? 'declined' : undefined));
    c.on('error', (err: unknown) => finishCall(c, describeError(err)));
  }

  function onIncoming(c: SdkCall, gen: number) {
    if (gen !== generation) return;
    if (call || isBusy(state)) {
      c.reject();
      return;
    }
    const rawFrom = c.parameters.From ?? '';
    const from = rawFrom.replace(/^client:/, '') || 'Unknown caller';
    const clientName = c.customParameters.get('ClientName') || undefined;
    const clientId = c.customParameters.get('ClientId') || undefined;
    const conversationId = c.customParameters.get('ConversationId') || undefined;
    const ids = { ...(clientId ? { clientId } : {}), ...(conversationId ? { conversationId } : {}) };
    const info: CallInfo = { direction: 'incoming', number: from, ...ids, ...(clientName ? { clientName } : {}) };
    attachCall(c, info);
    set({ kind: 'incoming', from, ...(clientName ? { clientName } : {}), ...ids });
    if (!clientName && options.lookupCaller && rawFrom && !rawFrom.startsWith('client:')) {
      options.lookupCaller(rawFrom).then(
        (found) => {
          if (!found?.clientName || call !== c || state.kind !== 'incoming') return;
          const ids = {
            ...(found.clientId ? { clientId: found.clientId } : {}),
            ...(found.conversationId ? { conversationId: found.conversationId } : {}),
          };
          callInfo = { ...info, clientName: found.clientName, ...ids };
          set({ ...state, clientName: found.clientName, ...ids });
        },
        () => {},
      );
    }
  }

  async function run(gen: number) {
    if (!network.isOnline()) {
      set({ kind: 'offline', reason: 'no network connection' });
      return;
    }
    set({ kind: 'starting' });

    let token: string;
    try {
      token = await options.fetchToken();
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof VoiceNotConfiguredError) set({ kind: 'not-configured', reason: err.message });
      else set({ kind: 'offline', reason: `could not get a voice token (${describeError(err)})` });
      return;
    }
    if (gen !== generation) return;

    let sdk: VoiceSdk;
    try {
      sdk = await loadSdk();
    } catch (err) {
      if (gen !== generation) return;
      set({ kind: 'offline', reason: `could not load the voice library (${describeError(err)})` });
      return;
    }
    if (gen !== generation) return;
    if (!sdk.Device.isSupported) {
      set({ kind: 'offline', reason: 'this browser cannot place calls (no WebRTC)' });
      return;
    }

    let d: SdkDevice;
    try {
      d = new sdk.Device(token, { closeProtection: true, tokenRefreshMs: 30_000 });
    } catch (err) {
      set({ kind: 'offline', reason: describeError(err) });
      return;
    }
    device = d;
    d.on('registered', () => {
      if (gen === generation && (state.kind === 'starting' || state.kind === 'offline')) set({ kind: 'ready' });
    });
    d.on('unregistered', () => {
      if (gen === generation && state.kind === 'ready') goOffline('disconnected from Twilio');
    });
    d.on('tokenWillExpire', () => {
      if (gen === generation) void refreshToken(gen);
    });
    d.on('incoming', (c: SdkCall) => onIncoming(c, gen));
    d.on('error', (err: unknown, c?: SdkCall) => {
      if (gen !== generation || c) return; // call errors arrive on the call too
      const code = errorCode(err);
      if (code !== undefined && TOKEN_ERROR.has(code)) {
        void refreshToken(gen);
        return;
      }
      if (state.kind === 'starting' || state.kind === 'ready') goOffline(describeError(err));
    });

    try {
      await withTimeout(d.register(), registerTimeoutMs, 'cannot reach Twilio (registration timed out)');
      if (gen === generation && (state.kind === 'starting' || state.kind === 'offline')) set({ kind: 'ready' });
    } catch (err) {
      if (gen === generation && state.kind === 'starting') set({ kind: 'offline', reason: describeError(err) });
    }
  }

  function start(): Promise<void> {
    watchNetwork();
    if (starting) return starting;
    if (state.kind !== 'idle' && state.kind !== 'offline' && state.kind !== 'not-configured') return Promise.resolve();
    if (device || call) teardown();
    const gen = generation;
    const p = run(gen).finally(() => {
      if (starting === p) starting = null;
    });
    starting = p;
    return p;
  }

  function retry(): Promise<void> {
    if (isBusy(state)) return Promise.resolve();
    teardown();
    set({ kind: 'idle' });
    return start();
  }

  async function connect(params: ConnectParams): Promise<void> {
    const d = device;
    const to = params.To.trim();
    if (!d || !canCall(state) || !to) return;
    const clientId = params.ClientId === undefined || params.ClientId === '' ? undefined : String(params.ClientId);
    const info: CallInfo = {
      direction: 'outgoing',
      number: to,
      ...(clientId ? { clientId } : {}),
      ...(params.clientName ? { clientName: params.clientName } : {}),
    };
    const gen = generation;
    callInfo = info;
    set({ kind: 'connecting', call: info });
    try {
      const c = await d.connect({ params: { To: to, ...(clientId ? { ClientId: clientId } : {}) } });
      if (gen !== generation) {
        c.disconnect();
        return;
      }
      if (state.kind !== 'connecting' || callInfo !== info) {
        // Hung up while the SDK was still setting up (and maybe already dialling again: that newer
        // attempt owns `connecting` now, so this call must not take its place).
        c.disconnect();
        return;
      }
      attachCall(c, info);
    } catch (err) {
      // Dropped when torn down, or when this attempt was hung up and another one started.
      if (gen !== generation || callInfo !== info) return;
      callInfo = null;
      set({ kind: 'ended', reason: describeError(err), call: info });
    }
  }

  function accept() {
    if (state.kind !== 'incoming' || !call || !callInfo) return;
    const info = callInfo;
    call.accept();
    if (call && state.kind === 'incoming') set({ kind: 'connecting', call: info });
  }

  function reject() {
    if (state.kind !== 'incoming' || !call) return;
    const c = call;
    c.reject();
    finishCall(c);
  }

  function setMuted(muted: boolean) {
    if (state.kind !== 'in-call' || !call) return;
    call.mute(muted);
    if (state.kind === 'in-call' && state.muted !== muted) set({ ...state, muted });
  }

  function sendDigits(digits: string) {
    if (state.kind !== 'in-call' || !call || !DTMF.test(digits)) return;
    call.sendDigits(digits);
  }

  function hangUp() {
    if (state.kind === 'incoming') return reject();
    if (state.kind === 'connecting' && !call) {
      // the SDK has not handed us the call yet: connect() disconnects it when it arrives
      const info = callInfo ?? undefined;
      callInfo = null;
      set({ kind: 'ended', ...(info ? { call: info } : {}) });
      return;
    }
    const c = call;
    if (!c) return;
    c.disconnect();
    finishCall(c); // no-op when the SDK already emitted 'disconnect'
  }

  function dismiss() {
    if (state.kind === 'ended') set(device ? { kind: 'ready' } : { kind: 'idle' });
  }

  function destroy() {
    unwatchNetwork?.();
    unwatchNetwork = null;
    teardown();
    set({ kind: 'idle' });
  }

  return {
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    start,
    retry,
    connect,
    accept,
    reject,
    setMuted,
    sendDigits,
    hangUp,
    dismiss,
    destroy,
  };
}
