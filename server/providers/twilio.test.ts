import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeTwilio, twilioTestNumberBehavior, type FakeTwilio } from '@/server/testing/fake-twilio';
import { createTwilioProvider, mapTwilioMessageStatus } from './twilio';
import { ProviderError, type SmsProvider, type SmsSendRequest } from './types';
import { twilioErrorMessage } from '@/server/shared/provider-errors';

let fake: FakeTwilio;
let provider: SmsProvider;

const FROM = '+15005550006';
const CALLBACK = 'https://app.example.com/api/webhooks/twilio/status?tenant=1';

function request(overrides: Partial<SmsSendRequest> = {}): SmsSendRequest {
  return { messageId: 1, to: '+14155550100', from: FROM, body: 'Hello there', statusCallback: CALLBACK, ...overrides };
}

async function sendError(p: SmsProvider, req: SmsSendRequest): Promise<ProviderError> {
  const err = await p.send(req).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

beforeAll(async () => {
  fake = await startFakeTwilio();
  provider = createTwilioProvider({ accountSid: fake.accountSid, authToken: fake.authToken, apiBaseUrl: fake.url });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.setBehavior(null);
  fake.failNext(0, { status: 500 });
  fake.hangNext(0);
});

describe('twilio provider: send', () => {
  it('creates the message through the real client and maps the answer', async () => {
    const result = await provider.send(
      request({
        body: 'Your appointment is at 3pm',
        mediaUrls: ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.png'],
      }),
    );
    expect(result.providerMessageId).toMatch(/^SM[0-9a-f]{32}$/);
    expect(result.status).toBe('queued');
    expect(result.segments).toBe(1);

    const seen = fake.messages.find((m) => m.sid === result.providerMessageId);
    expect(seen).toMatchObject({
      to: '+14155550100',
      from: FROM,
      body: 'Your appointment is at 3pm',
      statusCallback: CALLBACK,
      mediaUrls: ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.png'],
      accountSid: fake.accountSid,
    });
  });

  it('sends no MediaUrl when there is none, and reports multi-segment bodies', async () => {
    const result = await provider.send(request({ body: 'a'.repeat(161) }));
    expect(result.segments).toBe(2);
    expect(fake.messages.at(-1)!.mediaUrls).toEqual([]);
  });

  it('uses the account credentials as HTTP Basic auth (a wrong token is a permanent 401)', async () => {
    const wrong = createTwilioProvider({ accountSid: fake.accountSid, authToken: 'not-the-token', apiBaseUrl: fake.url });
    const before = fake.messages.length;
    const err = await sendError(wrong, request());
    expect(err).toMatchObject({ kind: 'permanent', code: '20003' });
    expect(fake.messages.length).toBe(before);
  });

  it('maps the initial status of the create answer', async () => {
    fake.setBehavior(() => ({ status: 201, messageStatus: 'accepted' }));
    expect((await provider.send(request())).status).toBe('queued');
    fake.setBehavior(() => ({ status: 201, messageStatus: 'sent' }));
    expect((await provider.send(request())).status).toBe('sent');
  });

  it('21211 (invalid To) is permanent', async () => {
    fake.setBehavior(twilioTestNumberBehavior);
    const err = await sendError(provider, request({ to: '+15005550001' }));
    expect(err).toMatchObject({ kind: 'permanent', code: '21211', optedOut: false });
    // Plain words for staff, Twilio's code in front (server/shared/provider-errors.ts).
    expect(err.message).toBe(twilioErrorMessage('21211'));
    expect(err.message).toMatch(/^Twilio error 21211: .*not a valid phone number/);
  });

  it('21610 (opted out) is permanent and flags the opt-out', async () => {
    fake.failNext(1, { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
    const err = await sendError(provider, request());
    expect(err).toMatchObject({ kind: 'permanent', code: '21610', optedOut: true });
    expect(err.message).toBe(twilioErrorMessage('21610'));
    // failNext(1) is used up: the next send goes through.
    await expect(provider.send(request())).resolves.toMatchObject({ status: 'queued' });
  });

  it.each([21612, 21408, 21601, 21606, 21614, 21635])('%i is permanent', async (code) => {
    fake.failNext(1, { status: 400, code });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'permanent', code: String(code), optedOut: false });
  });

  it('a 5xx is an unknown outcome (Twilio may have created it); a 429 is transient (it did not)', async () => {
    fake.failNext(1, { status: 500, code: 20500, message: 'Internal Server Error' });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'unknown', code: '20500' });
    fake.failNext(1, { status: 429, code: 20429, message: 'Too Many Requests' });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'transient', code: '20429' });
    fake.failNext(1, { status: 503 });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'unknown' });
  });

  it('a 2xx without a message SID is an unknown outcome', async () => {
    fake.failNext(1, { status: 201, sidless: true, acceptedAnyway: true });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'unknown', code: 'bad_response' });
  });

  it('does not retry a 429 itself', async () => {
    const before = fake.requests;
    fake.failNext(5, { status: 429, code: 20429 });
    expect(await sendError(provider, request())).toMatchObject({ kind: 'transient' });
    expect(fake.requests - before).toBe(1);
    fake.failNext(0, { status: 500 });
  });

  it('a refused connection is transient ECONNREFUSED', async () => {
    const port = await freePort();
    const down = createTwilioProvider({
      accountSid: fake.accountSid,
      authToken: fake.authToken,
      apiBaseUrl: `http://127.0.0.1:${port}`,
    });
    expect(await sendError(down, request())).toMatchObject({ kind: 'transient', code: 'ECONNREFUSED' });
  });

  it('a server that never answers is a quick timeout, outcome unknown', async () => {
    const slow = createTwilioProvider({
      accountSid: fake.accountSid,
      authToken: fake.authToken,
      apiBaseUrl: fake.url,
      timeoutMs: 300,
    });
    fake.hangNext(1);
    const started = Date.now();
    expect(await sendError(slow, request())).toMatchObject({ kind: 'unknown', code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
    // The provider still works afterwards.
    await expect(slow.send(request())).resolves.toMatchObject({ status: 'queued' });
  });

  it('timeoutMs bounds the whole request, even against a server that trickles bytes', async () => {
    const trickle = http.createServer((_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((r) => trickle.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}`;
      const p = createTwilioProvider({ accountSid: fake.accountSid, authToken: fake.authToken, apiBaseUrl: url, timeoutMs: 300 });
      const started = Date.now();
      expect(await sendError(p, request())).toMatchObject({ kind: 'unknown', code: 'timeout' });
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      trickle.closeAllConnections();
      await new Promise<void>((r) => trickle.close(() => r()));
    }
  });

  it('a dropped connection is ECONNRESET, outcome unknown', async () => {
    fake.hangNext(1, 'reset');
    expect(await sendError(provider, request())).toMatchObject({ kind: 'unknown', code: 'ECONNRESET' });
  });
});

describe('twilio provider: findSent', () => {
  it('finds the newest message with the exact body at or after since', async () => {
    const to = '+14155550142';
    const since = new Date();
    await provider.send(request({ to, body: 'Reminder: tomorrow 10am' }));
    const second = await provider.send(request({ to, body: 'Reminder: tomorrow 10am' }));
    await provider.send(request({ to, body: 'Something else' }));
    await provider.send(request({ to: '+14155550143', body: 'Reminder: tomorrow 10am' }));

    const found = await provider.findSent({ to, from: FROM, body: 'Reminder: tomorrow 10am', since });
    expect(found).toEqual({ providerMessageId: second.providerMessageId, status: 'queued', segments: 1 });
  });

  it('returns null for a different body, another sender, or messages before since', async () => {
    const to = '+14155550144';
    await provider.send(request({ to, body: 'Exact body' }));
    const now = Date.now();
    expect(await provider.findSent({ to, from: FROM, body: 'Exact body ', since: new Date(now - 1000) })).toBeNull();
    expect(await provider.findSent({ to, from: '+15005550010', body: 'Exact body', since: new Date(now - 1000) })).toBeNull();
    expect(await provider.findSent({ to, from: FROM, body: 'Exact body', since: new Date(now + 5 * 60_000) })).toBeNull();
    expect(await provider.findSent({ to, from: FROM, body: 'Exact body', since: new Date(now - 1000) })).not.toBeNull();
  });

  it('reports the current status of the found message', async () => {
    const to = '+14155550145';
    const sent = await provider.send(request({ to, body: 'status check', statusCallback: 'http://127.0.0.1:1/never' }));
    const m = fake.messages.find((x) => x.sid === sent.providerMessageId)!;
    m.status = 'delivered';
    const found = await provider.findSent({ to, from: FROM, body: 'status check', since: new Date(Date.now() - 5000) });
    expect(found).toMatchObject({ providerMessageId: sent.providerMessageId, status: 'delivered' });
  });

  it('finds the message however many were sent to the number after it (pages back to the attempt)', async () => {
    const to = '+14155550147';
    const since = new Date(Date.now() - 1000);
    const target = await provider.send(request({ to, body: 'the one looked for' }));
    // A busy client: 250 more texts after it, so it is far past the first page (the system test found this).
    for (let i = 0; i < 250; i++) await provider.send(request({ to, body: `later ${i}` }));
    const requestsBefore = fake.requests;
    expect(await provider.findSent({ to, from: FROM, body: 'the one looked for', since })).toMatchObject({
      providerMessageId: target.providerMessageId,
    });
    expect(fake.requests - requestsBefore).toBe(3); // three pages of 100, then it stops
  });

  it('skips the provider ids of earlier attempts', async () => {
    const to = '+14155550146';
    const first = await provider.send(request({ to, body: 'same words' }));
    const since = new Date(Date.now() - 5000);
    expect(await provider.findSent({ to, from: FROM, body: 'same words', since })).toMatchObject({
      providerMessageId: first.providerMessageId,
    });
    expect(
      await provider.findSent({ to, from: FROM, body: 'same words', since, excluding: [first.providerMessageId] }),
    ).toBeNull();
  });

  it('a failing list is classified like send', async () => {
    fake.hangNext(1, 'reset');
    await expect(provider.findSent({ to: '+1', from: FROM, body: 'x', since: new Date() })).rejects.toMatchObject({
      kind: 'unknown',
      code: 'ECONNRESET',
    });
  });
});

describe('mapTwilioMessageStatus', () => {
  it.each([
    ['accepted', 'queued'],
    ['scheduled', 'queued'],
    ['queued', 'queued'],
    ['sending', 'sending'],
    ['sent', 'sent'],
    ['delivered', 'delivered'],
    ['undelivered', 'undelivered'],
    ['failed', 'failed'],
    ['canceled', 'canceled'],
    ['read', 'read'],
    ['receiving', 'received'],
    ['received', 'received'],
    ['partially_delivered', null],
    ['something_new', 'queued'],
  ] as const)('%s → %s', (twilioStatus, ours) => {
    expect(mapTwilioMessageStatus(twilioStatus)).toBe(ours);
  });
});

describe('fake status callbacks', () => {
  type Captured = { url: string; signature: string; params: Record<string, string> };
  let receiver: http.Server;
  let receiverUrl: string;
  const captured: Captured[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (raw += c));
      req.on('end', () => {
        captured.push({
          url: req.url ?? '',
          signature: String(req.headers['x-twilio-signature'] ?? ''),
          params: Object.fromEntries(new URLSearchParams(raw)),
        });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  it('posts signed callbacks that validateRequest accepts, and rejects when altered', async () => {
    const callbackUrl = `${receiverUrl}/api/webhooks/twilio/status?m=42`;
    const sent = await provider.send(request({ to: '+14155550199', statusCallback: callbackUrl }));
    captured.length = 0;

    const results = await fake.sendStatusCallbacks(sent.providerMessageId, ['sent', 'undelivered'], { errorCode: '30003' });
    expect(results.map((r) => r.status)).toEqual([204, 204]);
    expect(captured).toHaveLength(2);

    const [first, second] = captured as [Captured, Captured];
    expect(first.url).toBe('/api/webhooks/twilio/status?m=42');
    expect(first.params).toMatchObject({
      MessageSid: sent.providerMessageId,
      SmsSid: sent.providerMessageId,
      MessageStatus: 'sent',
      SmsStatus: 'sent',
      AccountSid: fake.accountSid,
      From: FROM,
      To: '+14155550199',
      ApiVersion: '2010-04-01',
      ErrorCode: '30003',
    });
    expect(second.params.MessageStatus).toBe('undelivered');

    for (const c of captured) {
      expect(twilio.validateRequest(fake.authToken, c.signature, callbackUrl, c.params)).toBe(true);
    }
    // A changed param, another token or another URL must fail.
    expect(
      twilio.validateRequest(fake.authToken, first.signature, callbackUrl, { ...first.params, MessageStatus: 'delivered' }),
    ).toBe(false);
    expect(twilio.validateRequest('other-token', first.signature, callbackUrl, first.params)).toBe(false);
    expect(
      twilio.validateRequest(fake.authToken, first.signature, `${receiverUrl}/api/webhooks/twilio/status`, first.params),
    ).toBe(false);

    // The fake's own record follows the callbacks.
    expect(fake.messages.find((m) => m.sid === sent.providerMessageId)).toMatchObject({
      status: 'undelivered',
      errorCode: 30003,
    });
  });
});

describe('throughput against the fake', () => {
  it('pushes 2,000 sends with 32 in flight through the real client (latency 5 ms)', async () => {
    const bench = await startFakeTwilio({ latencyMs: 5 });
    try {
      const p = createTwilioProvider({ accountSid: bench.accountSid, authToken: bench.authToken, apiBaseUrl: bench.url });
      const total = 2_000;
      const concurrency = 32;
      // Warm up the connection pool.
      await Promise.all(Array.from({ length: concurrency }, (_, i) => p.send(request({ messageId: i }))));
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < total) {
            const i = next++;
            await p.send(request({ messageId: i, body: `Bench ${i}` }));
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const rate = total / seconds;
      console.log(
        `fake-twilio: ${total} sends, ${concurrency} in flight, latency 5 ms: ${seconds.toFixed(2)} s = ${rate.toFixed(0)} sends/s`,
      );
      expect(bench.messages.length).toBe(total + concurrency);
      // Loose floor: other test files run in parallel on the same machine.
      expect(rate).toBeGreaterThan(200);
    } finally {
      await bench.close();
    }
  });
});
