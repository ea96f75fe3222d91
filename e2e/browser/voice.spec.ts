import { expect, test } from './fixtures';
import { twilioSid } from '../../server/providers/webhook-requests';
import { clientTexted, postTwilio } from './support';

/**
 * Voice in the browser. Twilio is never reached from here: the dialer must say it is offline, and
 * a call's life arrives as Twilio would report it, through the signed voice webhooks.
 */

test('the dialer opens, obtains a token, and shows the offline state without network', async ({ page, tenant, request }) => {
  await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Can you call me back?');
  // No network beyond this machine: Twilio's signalling servers are unreachable.
  await page.context().route(
    (url) => url.hostname !== 'localhost',
    (route) => route.abort('internetdisconnected'),
  );

  const token = page.waitForResponse((res) => res.url().includes('voice.token') && res.status() === 200);
  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  await token;
  await page.getByRole('button', { name: 'Call Ana Lopez' }).click();
  const dialer = page.getByRole('dialog', { name: 'Dialer' });
  await expect(dialer).toBeVisible();
  await expect(dialer.getByRole('status')).toContainText('Voice offline', { timeout: 20_000 });
  await expect(dialer.getByRole('button', { name: /Retry/ })).toBeVisible();
  await page.screenshot({ path: test.info().outputPath('dialer-offline.png') });
});

test('a completed call shows in the timeline once, with its duration and a recording player', async ({
  page,
  tenant,
  request,
}) => {
  const { client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Call me when you can');
  const account = { AccountSid: `AC${'0'.repeat(32)}`, ApiVersion: '2010-04-01' };
  const call = { CallSid: twilioSid('CA'), From: `client:staff-${tenant.staffId}`, To: ana.phone };

  // The browser places the call: Twilio asks for instructions, then reports the call's progress
  // (twice, and out of order, as it may), then the recording.
  const twiml = await postTwilio(request, '/api/v1/voice-calls/instructions', {
    ...account,
    ...call,
    Direction: 'inbound',
    CallStatus: 'ringing',
    ClientId: String(ana.id),
  });
  expect(twiml).toContain('<Dial');
  const status = (CallStatus: string, extra: Record<string, string> = {}) =>
    postTwilio(request, '/api/v1/webhooks/twilio/voice/status', {
      ...account,
      ...call,
      Direction: 'inbound',
      CallbackSource: 'call-progress-events',
      CallStatus,
      ...extra,
    });
  await status('completed', { CallDuration: '95' });
  await status('in-progress');
  await status('completed', { CallDuration: '95' });
  const recordingSid = twilioSid('RE');
  const recording = `https://api.twilio.com/2010-04-01/Accounts/${account.AccountSid}/Recordings/${recordingSid}`;
  await postTwilio(request, '/api/v1/webhooks/twilio/voice/recording', {
    ...account,
    CallSid: call.CallSid,
    RecordingSid: recordingSid,
    RecordingUrl: recording,
    RecordingStatus: 'completed',
    RecordingDuration: '90',
  });

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const calls = page.getByRole('log', { name: 'Messages' }).getByTestId('call-entry');
  await expect(calls).toHaveCount(1);
  await expect(calls).toContainText('Outgoing call');
  await expect(calls.getByTestId('call-duration')).toHaveText('1:35');
  await expect(calls.locator('audio')).toHaveAttribute('src', recording);
});

/**
 * The dialer's states in the real page, with the Voice SDK replaced through its one seam
 * (`window.__voiceSdkOverride`) by a fake that plays Twilio's events on demand.
 */
test('dialer states: an outgoing call rings, connects with a timer, mutes and ends; an incoming call shows a toast', async ({
  page,
  tenant,
  request,
}) => {
  await page.addInitScript(() => {
    class Emitter {
      listeners = new Map<string, ((...args: unknown[]) => void)[]>();
      on(event: string, fn: (...args: unknown[]) => void) {
        this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
        return this;
      }
      removeAllListeners(event?: string) {
        if (event) this.listeners.delete(event);
        else this.listeners.clear();
        return this;
      }
      emit(event: string, ...args: unknown[]) {
        for (const fn of this.listeners.get(event) ?? []) fn(...args);
      }
    }
    class FakeCall extends Emitter {
      muted = false;
      constructor(
        public parameters: Record<string, string>,
        public customParameters: Map<string, string>,
      ) {
        super();
      }
      accept() {
        this.emit('accept', this);
      }
      reject() {
        this.emit('reject');
      }
      disconnect() {
        this.emit('disconnect', this);
      }
      mute(should = true) {
        this.muted = should;
        this.emit('mute', should, this);
      }
      isMuted() {
        return this.muted;
      }
      sendDigits() {}
    }
    class FakeDevice extends Emitter {
      static isSupported = true;
      state = 'unregistered';
      constructor(public token: string) {
        super();
        (window as unknown as { __device: FakeDevice }).__device = this;
      }
      async register() {
        this.state = 'registered';
        this.emit('registered');
      }
      async connect(options?: { params?: Record<string, string> }) {
        const call = new FakeCall({ To: options?.params?.To ?? '' }, new Map(Object.entries(options?.params ?? {})));
        (window as unknown as { __call: FakeCall }).__call = call;
        return call;
      }
      incoming(from: string, name: string) {
        const call = new FakeCall({ From: from, CallSid: 'CA-incoming' }, new Map([['ClientName', name]]));
        (window as unknown as { __call: FakeCall }).__call = call;
        this.emit('incoming', call);
      }
      updateToken(token: string) {
        this.token = token;
      }
      disconnectAll() {}
      destroy() {}
    }
    (window as unknown as { __voiceSdkOverride: unknown }).__voiceSdkOverride = { Device: FakeDevice };
  });
  const { client: ana } = await clientTexted(request, tenant.businessId, 'Ana Lopez', 'Please call me');
  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();

  await page.getByRole('button', { name: 'Call Ana Lopez' }).click();
  const dialer = page.getByRole('dialog', { name: 'Dialer' });
  await expect(dialer.getByRole('status')).toContainText('Ready to call');
  await dialer.getByRole('button', { name: /^Call / }).click();
  const callEvent = (event: string) =>
    page.evaluate(
      (e) =>
        (window as unknown as { __call: { emit(e: string, ...a: unknown[]): void } }).__call.emit(
          e,
          (window as unknown as { __call: unknown }).__call,
        ),
      event,
    );
  expect(
    await page.evaluate(() =>
      Object.fromEntries((window as unknown as { __call: { customParameters: Map<string, string> } }).__call.customParameters),
    ),
  ).toMatchObject({ To: ana.phone, ClientId: String(ana.id) });
  await callEvent('ringing');
  await expect(dialer.getByRole('status')).toContainText('Ringing');
  await callEvent('accept');
  await expect(dialer.getByRole('status')).toContainText('In call with Ana Lopez');
  await expect(dialer.getByRole('timer', { name: 'Call duration' })).toHaveText(/0:0[1-9]/, { timeout: 5_000 });
  await dialer.getByRole('button', { name: 'Mute microphone' }).click();
  await expect(dialer.getByRole('button', { name: 'Unmute microphone' })).toBeVisible();
  await dialer.getByRole('button', { name: 'Hang up' }).click();
  await expect(dialer.getByRole('status')).toContainText('Call ended');
  await dialer.getByRole('button', { name: 'Close dialer' }).click();

  await page.evaluate(
    (from) => (window as unknown as { __device: { incoming(f: string, n: string): void } }).__device.incoming(from, 'Ana Lopez'),
    ana.phone,
  );
  const toast = page.getByRole('region', { name: /Incoming call/ });
  await expect(toast).toContainText('Ana Lopez');
  await toast.getByRole('button', { name: 'Accept call from Ana Lopez' }).click();
  await expect(page.getByRole('button', { name: 'Hang up call with Ana Lopez' })).toBeVisible();
  await page.getByRole('button', { name: 'Hang up call with Ana Lopez' }).click();
  await expect(page.getByRole('button', { name: 'Hang up call with Ana Lopez' })).toHaveCount(0);
});
