import { TRPCClientError } from '@trpc/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toVoiceTokenError } from './use-dialer';
import {
  createVoiceDevice,
  describeState,
  elapsedSeconds,
  formatDuration,
  VoiceNotConfiguredError,
  type DialerState,
  type NetworkWatch,
  type SdkCall,
  type SdkDevice,
  type SdkDeviceOptions,
  type VoiceDeviceOptions,
  type VoiceSdk,
} from './voice-device';

// ---------------------------------------------------------------------------------------------
// A fake @twilio/voice-sdk, handed in through the `loadSdk` seam (or window.__voiceSdkOverride).

/** A listener as the SDK calls it: with whatever the event carries, whatever the listener declared. */
type Fn = (...args: unknown[]) => void;

class FakeEmitter {
  private handlers = new Map<string, Fn[]>();
  on(event: string, fn: (...args: never[]) => void) {
    this.handlers.set(event, [...(this.handlers.get(event) ?? []), fn as Fn]);
    return this;
  }
  removeAllListeners(event?: string) {
    if (event) this.handlers.delete(event);
    else this.handlers.clear();
    return this;
  }
  emit(event: string, ...args: unknown[]) {
    for (const fn of this.handlers.get(event) ?? []) fn(...args);
  }
}

class FakeCall extends FakeEmitter implements SdkCall {
  muted = false;
  digits: string[] = [];
  accepted = 0;
  rejected = 0;
  disconnected = 0;
  readonly customParameters: Map<string, string>;
  constructor(
    readonly parameters: Record<string, string> = {},
    custom: Record<string, string> = {},
  ) {
    super();
    this.customParameters = new Map(Object.entries(custom));
  }
  accept() {
    this.accepted++;
  }
  reject() {
    this.rejected++;
  }
  disconnect() {
    this.disconnected++;
    this.emit('disconnect', this);
  }
  mute(shouldMute = true) {
    this.muted = shouldMute;
    this.emit('mute', shouldMute, this);
  }
  isMuted() {
    return this.muted;
  }
  sendDigits(d: string) {
    this.digits.push(d);
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function fakeSdk() {
  const devices: FakeDevice[] = [];
  class FakeDevice extends FakeEmitter implements SdkDevice {
    static isSupported = true;
    state = 'unregistered';
    tokens: string[];
    registration = deferred<void>();
    connects: Array<{ params?: Record<string, string> }> = [];
    nextCall: FakeCall | Error = new FakeCall();
    destroyed = false;
    constructor(
      token: string,
      readonly options?: SdkDeviceOptions,
    ) {
      super();
      this.tokens = [token];
      devices.push(this);
    }
    register() {
      this.state = 'registering';
      return this.registration.promise;
    }
    /** What Twilio does when registration succeeds. */
    succeed() {
      this.state = 'registered';
      this.emit('registered');
      this.registration.resolve();
    }
    async connect(options?: { params?: Record<string, string> }) {
      this.connects.push(options ?? {});
      if (this.nextCall instanceof Error) throw this.nextCall;
      return this.nextCall;
    }
    updateToken(token: string) {
      this.tokens.push(token);
    }
    disconnectAll() {}
    destroy() {
      this.destroyed = true;
    }
  }
  const sdk: VoiceSdk = { Device: FakeDevice };
  return { sdk, devices, FakeDevice };
}

function fakeNetwork(online = true) {
  let listener: ((online: boolean) => void) | null = null;
  const network: NetworkWatch & { set(online: boolean): void } = {
    isOnline: () => online,
    subscribe(fn) {
      listener = fn;
      return () => {
        listener = null;
      };
    },
    set(next) {
      online = next;
      listener?.(next);
    },
  };
  return network;
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function setup(overrides: Partial<VoiceDeviceOptions> = {}) {
  const { sdk, devices } = fakeSdk();
  let clock = 1_000_000;
  let tokenNo = 0;
  const fetchToken = vi.fn(async () => `token-${++tokenNo}`);
  const network = fakeNetwork();
  const dialer = createVoiceDevice({
    fetchToken,
    loadSdk: async () => sdk,
    network,
    now: () => clock,
    registerTimeoutMs: 50,
    ...overrides,
  });
  const seen: DialerState['kind'][] = [];
  dialer.subscribe((s) => seen.push(s.kind));
  return {
    dialer,
    devices,
    fetchToken,
    network,
    seen,
    device: () => devices.at(-1)!,
    tick: (ms: number) => {
      clock += ms;
    },
    async ready() {
      const started = dialer.start();
      await flush();
      devices.at(-1)!.succeed();
      await started;
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

// ---------------------------------------------------------------------------------------------

describe('formatDuration / elapsedSeconds', () => {
  it('formats mm:ss, then h:mm:ss from one hour', () => {
    expect(formatDuration(0)).toBe('00:00');
    expect(formatDuration(5)).toBe('00:05');
    expect(formatDuration(59.9)).toBe('00:59');
    expect(formatDuration(65)).toBe('01:05');
    expect(formatDuration(3599)).toBe('59:59');
    expect(formatDuration(3600)).toBe('1:00:00');
    expect(formatDuration(3 * 3600 + 62)).toBe('3:01:02');
  });
  it('treats negative and non-finite input as zero', () => {
    expect(formatDuration(-3)).toBe('00:00');
    expect(formatDuration(Number.NaN)).toBe('00:00');
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe('00:00');
  });
  it('counts whole seconds, never negative', () => {
    expect(elapsedSeconds(1000, 1999)).toBe(0);
    expect(elapsedSeconds(1000, 66_000)).toBe(65);
    expect(elapsedSeconds(5000, 1000)).toBe(0);
  });
});

describe('describeState', () => {
  it('has stable texts for the unavailable states', () => {
    expect(describeState({ kind: 'not-configured', reason: 'x' })).toBe("Calling isn't set up for this business");
    expect(describeState({ kind: 'offline', reason: 'cannot reach Twilio (31005)' })).toBe(
      'Voice offline: cannot reach Twilio (31005)',
    );
    expect(describeState({ kind: 'incoming', from: '+14155550123', clientName: 'Ada' })).toBe('Incoming call from Ada');
  });
});

describe('start', () => {
  it('fetches a token, builds the Device with it, registers, and is ready', async () => {
    const t = setup();
    await t.ready();
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
    expect(t.seen).toEqual(['starting', 'ready']);
    expect(t.devices).toHaveLength(1);
    expect(t.device().tokens).toEqual(['token-1']);
    // a second start (another component mounting) changes nothing
    await t.dialer.start();
    expect(t.devices).toHaveLength(1);
    expect(t.fetchToken).toHaveBeenCalledTimes(1);
  });

  it('is not-configured when the token service says so, without loading the SDK', async () => {
    const loadSdk = vi.fn();
    const t = setup({
      fetchToken: async () => Promise.reject(new VoiceNotConfiguredError('Twilio voice is not configured')),
      loadSdk,
    });
    await t.dialer.start();
    expect(t.dialer.getState()).toEqual({ kind: 'not-configured', reason: 'Twilio voice is not configured' });
    expect(loadSdk).not.toHaveBeenCalled();
  });

  it('is offline when the token cannot be fetched', async () => {
    const t = setup({ fetchToken: async () => Promise.reject(new TypeError('Failed to fetch')) });
    await t.dialer.start();
    expect(t.dialer.getState()).toEqual({ kind: 'offline', reason: 'could not get a voice token (Failed to fetch)' });
  });

  it('is offline when the browser is offline, and retries when it comes back', async () => {
    const t = setup();
    t.network.set(false);
    await t.dialer.start();
    expect(t.dialer.getState()).toEqual({ kind: 'offline', reason: 'no network connection' });
    expect(t.fetchToken).not.toHaveBeenCalled();

    t.network.set(true);
    await flush();
    t.device().succeed();
    await flush();
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('is offline on a signalling error while registering, and ready if Twilio answers later', async () => {
    const t = setup({ registerTimeoutMs: 10_000 });
    const started = t.dialer.start();
    await flush();
    t.device().emit('error', { code: 31005, message: 'ConnectionError (31005): ...' });
    expect(t.dialer.getState()).toEqual({ kind: 'offline', reason: 'cannot reach Twilio (31005)' });
    t.device().succeed();
    await started;
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('is offline when registration never settles', async () => {
    const t = setup({ registerTimeoutMs: 20 });
    await t.dialer.start();
    expect(t.dialer.getState()).toEqual({ kind: 'offline', reason: 'cannot reach Twilio (registration timed out)' });
  });

  it('retry destroys the old Device and starts a new one', async () => {
    const t = setup({ registerTimeoutMs: 20 });
    await t.dialer.start();
    const first = t.device();
    const again = t.dialer.retry();
    await flush();
    t.device().succeed();
    await again;
    expect(first.destroyed).toBe(true);
    expect(t.devices).toHaveLength(2);
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('uses window.__voiceSdkOverride when no loader is injected', async () => {
    const { sdk, devices } = fakeSdk();
    vi.stubGlobal('window', { __voiceSdkOverride: sdk });
    const dialer = createVoiceDevice({ fetchToken: async () => 'tok', network: fakeNetwork(), registerTimeoutMs: 50 });
    const started = dialer.start();
    await flush();
    devices[0]!.succeed();
    await started;
    expect(dialer.getState()).toEqual({ kind: 'ready' });
    expect(devices[0]!.tokens).toEqual(['tok']);
  });
});

describe('token refresh', () => {
  it('fetches a new token on tokenWillExpire and hands it to the Device', async () => {
    const t = setup();
    await t.ready();
    t.device().emit('tokenWillExpire', t.device());
    await flush();
    expect(t.device().tokens).toEqual(['token-1', 'token-2']);
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('refreshes on an expired-token error too', async () => {
    const t = setup();
    await t.ready();
    t.device().emit('error', { code: 31205, message: 'AccessTokenExpired' });
    await flush();
    expect(t.device().tokens).toEqual(['token-1', 'token-2']);
  });
});

describe('outgoing call', () => {
  it('connecting → ringing → in call (muted, tones) → ended with the duration', async () => {
    const t = setup();
    await t.ready();
    const call = new FakeCall({ To: '+14155550123' });
    t.device().nextCall = call;

    await t.dialer.connect({ To: ' +14155550123 ', ClientId: 42, clientName: 'Ada' });
    expect(t.device().connects).toEqual([{ params: { To: '+14155550123', ClientId: '42' } }]);
    const info = { direction: 'outgoing', number: '+14155550123', clientId: '42', clientName: 'Ada' };
    expect(t.dialer.getState()).toEqual({ kind: 'connecting', call: info });

    call.emit('ringing', false);
    expect(t.dialer.getState()).toEqual({ kind: 'ringing', call: info });

    call.emit('accept', call);
    expect(t.dialer.getState()).toEqual({ kind: 'in-call', since: 1_000_000, muted: false, call: info });

    t.dialer.setMuted(true);
    expect(call.muted).toBe(true);
    expect(t.dialer.getState()).toMatchObject({ kind: 'in-call', muted: true });
    t.dialer.setMuted(false);
    expect(t.dialer.getState()).toMatchObject({ kind: 'in-call', muted: false });

    t.dialer.sendDigits('1#');
    t.dialer.sendDigits('12; drop table'); // not DTMF: ignored
    expect(call.digits).toEqual(['1#']);

    t.tick(65_400);
    t.dialer.hangUp();
    expect(call.disconnected).toBe(1);
    expect(t.dialer.getState()).toEqual({ kind: 'ended', durationSeconds: 65, call: info });

    // a new call can be placed from "ended"; dismiss goes back to ready
    t.dialer.dismiss();
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('omits ClientId when none is given and ignores calls while not ready', async () => {
    const t = setup();
    await t.dialer.connect({ To: '+14155550123' }); // idle: nothing happens
    expect(t.dialer.getState()).toEqual({ kind: 'idle' });
    await t.ready();
    await t.dialer.connect({ To: '+14155550123' });
    expect(t.device().connects).toEqual([{ params: { To: '+14155550123' } }]);
    await t.dialer.connect({ To: '+14155550999' }); // busy: ignored
    expect(t.device().connects).toHaveLength(1);
  });

  it('ends with a reason when the call cannot start (microphone refused)', async () => {
    const t = setup();
    await t.ready();
    t.device().nextCall = Object.assign(new Error('Permission denied'), { code: 31401 });
    await t.dialer.connect({ To: '+14155550123' });
    expect(t.dialer.getState()).toMatchObject({ kind: 'ended', reason: 'microphone permission denied' });
  });

  it('a call hung up before the SDK hands it over never takes the place of the next one dialled', async () => {
    const t = setup();
    await t.ready();
    const first = new FakeCall({ To: '+14155550123' });
    const second = new FakeCall({ To: '+14155550999' });
    const pending = [deferred<FakeCall>(), deferred<FakeCall>()];
    let n = 0;
    t.device().connect = async () => pending[n++]!.promise;

    const firstConnect = t.dialer.connect({ To: '+14155550123' });
    t.dialer.hangUp(); // before the SDK answered
    expect(t.dialer.getState()).toMatchObject({ kind: 'ended' });
    t.dialer.dismiss();
    const secondConnect = t.dialer.connect({ To: '+14155550999' });
    expect(t.dialer.getState()).toMatchObject({ kind: 'connecting', call: { number: '+14155550999' } });

    // The first attempt's call arrives late: it is dropped, the second attempt keeps the dialer.
    pending[0]!.resolve(first);
    await firstConnect;
    expect(first.disconnected).toBe(1);
    expect(t.dialer.getState()).toMatchObject({ kind: 'connecting', call: { number: '+14155550999' } });
    first.emit('accept', first);
    expect(t.dialer.getState()).toMatchObject({ kind: 'connecting', call: { number: '+14155550999' } });

    pending[1]!.resolve(second);
    await secondConnect;
    second.emit('accept', second);
    expect(t.dialer.getState()).toMatchObject({ kind: 'in-call', call: { number: '+14155550999' } });
    expect(second.disconnected).toBe(0);
  });

  it('a failure of an attempt already hung up does not end the next one', async () => {
    const t = setup();
    await t.ready();
    const pending = [deferred<FakeCall>(), deferred<FakeCall>()];
    let n = 0;
    t.device().connect = async () => pending[n++]!.promise;

    const firstConnect = t.dialer.connect({ To: '+14155550123' });
    t.dialer.hangUp();
    t.dialer.dismiss();
    void t.dialer.connect({ To: '+14155550999' });
    pending[0]!.reject(Object.assign(new Error('Permission denied'), { code: 31401 }));
    await firstConnect;
    expect(t.dialer.getState()).toMatchObject({ kind: 'connecting', call: { number: '+14155550999' } });
  });

  it('ends when the far end hangs up or the call errors', async () => {
    const t = setup();
    await t.ready();
    const call = new FakeCall();
    t.device().nextCall = call;
    await t.dialer.connect({ To: '+14155550123' });
    call.emit('error', { code: 31005, message: 'gone' });
    expect(t.dialer.getState()).toMatchObject({ kind: 'ended', reason: 'cannot reach Twilio (31005)' });
    expect(t.dialer.getState()).not.toHaveProperty('durationSeconds');
  });
});

describe('incoming call', () => {
  it('shows the caller from the TwiML parameters; accept → in call; hang-up by the caller → ended', async () => {
    const t = setup();
    await t.ready();
    const call = new FakeCall(
      { From: '+14155550123', CallSid: 'CA1' },
      { ClientName: 'Ada Lovelace', ClientId: '7', ConversationId: '3' },
    );
    t.device().emit('incoming', call);
    expect(t.dialer.getState()).toEqual({
      kind: 'incoming',
      from: '+14155550123',
      clientName: 'Ada Lovelace',
      clientId: '7',
      conversationId: '3',
    });

    t.dialer.accept();
    expect(call.accepted).toBe(1);
    const info = {
      direction: 'incoming',
      number: '+14155550123',
      clientId: '7',
      conversationId: '3',
      clientName: 'Ada Lovelace',
    };
    expect(t.dialer.getState()).toEqual({ kind: 'connecting', call: info });
    call.emit('accept', call);
    expect(t.dialer.getState()).toEqual({ kind: 'in-call', since: 1_000_000, muted: false, call: info });

    t.tick(3_000);
    call.emit('disconnect', call);
    expect(t.dialer.getState()).toEqual({ kind: 'ended', durationSeconds: 3, call: info });
  });

  it('looks the caller up when the TwiML passed no ClientName', async () => {
    const lookupCaller = vi.fn(async () => ({ clientName: 'Grace', clientId: '9' }));
    const t = setup({ lookupCaller });
    await t.ready();
    const call = new FakeCall({ From: '+14155550199' });
    t.device().emit('incoming', call);
    expect(t.dialer.getState()).toEqual({ kind: 'incoming', from: '+14155550199' });
    await flush();
    expect(lookupCaller).toHaveBeenCalledWith('+14155550199');
    expect(t.dialer.getState()).toEqual({ kind: 'incoming', from: '+14155550199', clientName: 'Grace', clientId: '9' });
    // the name found stays with the call once answered
    t.dialer.accept();
    call.emit('accept', call);
    expect(t.dialer.getState()).toMatchObject({
      kind: 'in-call',
      call: { direction: 'incoming', number: '+14155550199', clientName: 'Grace', clientId: '9' },
    });
  });

  it('reject and a caller giving up both go back to ready', async () => {
    const t = setup();
    await t.ready();
    const first = new FakeCall({ From: '+14155550123' });
    t.device().emit('incoming', first);
    t.dialer.reject();
    expect(first.rejected).toBe(1);
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });

    const second = new FakeCall({ From: '+14155550123' });
    t.device().emit('incoming', second);
    second.emit('cancel');
    expect(t.dialer.getState()).toEqual({ kind: 'ready' });
  });

  it('rejects a second incoming call while busy', async () => {
    const t = setup();
    await t.ready();
    await t.dialer.connect({ To: '+14155550123' });
    const other = new FakeCall({ From: '+14155550777' });
    t.device().emit('incoming', other);
    expect(other.rejected).toBe(1);
    expect(t.dialer.getState().kind).toBe('connecting');
  });
});

describe('toVoiceTokenError', () => {
  const trpcError = (code: string, message: string) =>
    TRPCClientError.from({ error: { code: -32603, message, data: { code, httpStatus: 503 } } });

  it('maps SERVICE_UNAVAILABLE to not-configured, in words for staff (never the setting names)', () => {
    const err = toVoiceTokenError(trpcError('SERVICE_UNAVAILABLE', 'Voice calling is not configured: set TWILIO_API_KEY_SID'));
    expect(err).toBeInstanceOf(VoiceNotConfiguredError);
    expect((err as Error).message).not.toMatch(/TWILIO/);
    expect((err as Error).message).toMatch(/set up calling/);
  });

  it('leaves a database outage and other errors alone', () => {
    const db = trpcError('SERVICE_UNAVAILABLE', 'Database unavailable');
    expect(toVoiceTokenError(db)).toBe(db);
    const auth = trpcError('UNAUTHORIZED', 'Not authenticated');
    expect(toVoiceTokenError(auth)).toBe(auth);
    const net = new TypeError('Failed to fetch');
    expect(toVoiceTokenError(net)).toBe(net);
  });
});
