import { expect, test } from './fixtures';
import { twilioSid } from '../server/providers/webhook-requests';
import { addClient, equipBusiness, inboundSms, postTwilio } from './support';

/**
 * Voice in the browser. Twilio is never reached from here: the dialer must say it is offline, and
 * a call's life arrives as Twilio would report it, through the signed voice webhooks.
 */

test('the dialer opens, obtains a token, and shows the offline state without network', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  await inboundSms(request, ana.phone, business.smsNumber, 'Can you call me back?');
  // No network beyond this machine: Twilio's signalling servers are unreachable.
  await page.context().route((url) => url.hostname !== 'localhost', (route) => route.abort('internetdisconnected'));

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

test('a completed call shows in the timeline once, with its duration and a recording player', async ({ page, tenant, request }) => {
  const business = await equipBusiness(tenant.businessId);
  const ana = await addClient(tenant.businessId, 'Ana Lopez');
  await inboundSms(request, ana.phone, business.smsNumber, 'Call me when you can');
  const account = { AccountSid: `AC${'0'.repeat(32)}`, ApiVersion: '2010-04-01' };
  const call = { CallSid: twilioSid('CA'), From: `client:staff-${tenant.staffId}`, To: ana.phone };

  // The browser places the call: Twilio asks for instructions, then reports the call's progress
  // (twice, and out of order, as it may), then the recording.
  const twiml = await postTwilio(request, '/api/v1/voice-calls/instructions', { ...account, ...call, Direction: 'inbound', CallStatus: 'ringing', ClientId: String(ana.id) });
  expect(twiml).toContain('<Dial');
  const status = (CallStatus: string, extra: Record<string, string> = {}) =>
    postTwilio(request, '/api/v1/webhooks/twilio/voice/status', { ...account, ...call, Direction: 'inbound', CallbackSource: 'call-progress-events', CallStatus, ...extra });
  await status('completed', { CallDuration: '95' });
  await status('in-progress');
  await status('completed', { CallDuration: '95' });
  const recordingSid = twilioSid('RE');
  const recording = `https://api.twilio.com/2010-04-01/Accounts/${account.AccountSid}/Recordings/${recordingSid}`;
  await postTwilio(request, '/api/v1/webhooks/twilio/voice/recording', { ...account, CallSid: call.CallSid, RecordingSid: recordingSid, RecordingUrl: recording, RecordingStatus: 'completed', RecordingDuration: '90' });

  await page.goto(tenant.loginUrl);
  await page.getByRole('option', { name: /^Ana Lopez/ }).click();
  const calls = page.getByRole('log', { name: 'Messages' }).getByTestId('call-entry');
  await expect(calls).toHaveCount(1);
  await expect(calls).toContainText('Outgoing call');
  await expect(calls.getByTestId('call-duration')).toHaveText('1:35');
  await expect(calls.locator('audio')).toHaveAttribute('src', recording);
});
