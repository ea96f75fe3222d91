import { count } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, messages, webhookEvents } from '@/db/schema';
import { groupPairs } from '@/server/lib/pairs';
import { expectedTwilioSignature } from '@/server/providers/twilio-signature';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { api } from '@/server/testing/http';
import {
  installSendgridKeyPair,
  multipartBody,
  postBytes,
  sendgridSignature,
  TEST_BASE_URL,
  TWILIO_DEV_TOKEN,
  TWILIO_PATHS,
} from '@/server/testing/webhooks';

/**
 * Property-based suite for the provider webhooks, which sit outside the OpenAPI auth model: each
 * generated form or JSON is signed exactly as the provider signs it (or not at all, or tampered),
 * with hostile values — U+0000, lone surrogates, 70,000-character values, integers at their
 * bounds, empty names, duplicate keys, wrong content types, truncated multipart bodies. For every
 * request: never a 5xx, never over 1 s; signed → 2xx unless it is not understood (4xx); unsigned
 * or tampered → 403 and no row written. A failure prints fast-check's seed and path to replay.
 */
const keys = installSendgridKeyPair();
const RUNS = Number(process.env.WEBHOOK_FUZZ_RUNS ?? 60);

const hostileText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'a\u0000b',
      '\u0000',
      'x\ud800y',
      '\udfff',
      '2147483647',
      '2147483648',
      '-1',
      '0',
      '',
      ' '.repeat(500) + '!',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(70_000, 20_000).map((n) => 'x'.repeat(n)) },
);
const twilioName = fc.oneof(
  fc.constantFrom(
    'MessageSid',
    'SmsSid',
    'AccountSid',
    'From',
    'To',
    'Body',
    'MessageStatus',
    'ErrorCode',
    'NumMedia',
    'MediaUrl0',
    'CallSid',
    'CallStatus',
    'RecordingSid',
    'RecordingUrl',
    'SequenceNumber',
    'ParentCallSid',
  ),
  fc.constantFrom('', '__proto__', 'constructor', 'a\u0000'),
  fc.string({ maxLength: 12 }),
);
const sidLike = fc.oneof(fc.stringMatching(/^(SM|CA|RE)[0-9a-f]{32}$/), hostileText);

const rowCounts = async () =>
  Promise.all([webhookEvents, messages, clients].map(async (t) => (await db.select({ n: count() }).from(t))[0]!.n)).then((n) =>
    n.join(','),
  );

async function timed(send: () => Promise<Response>) {
  const started = performance.now();
  const res = await send();
  await res.arrayBuffer();
  return { res, ms: performance.now() - started };
}

describe('Twilio webhooks, property-based', () => {
  const paths = [
    TWILIO_PATHS.smsIncoming,
    TWILIO_PATHS.smsStatus,
    TWILIO_PATHS.voiceStatus,
    '/api/v1/webhooks/twilio/voice/recording',
    '/api/v1/voice-calls/instructions',
  ];

  it('signed forms of hostile values answer 2xx (or 413 past 64 KiB); unsigned and tampered ones 403 and leave nothing', async () => {
    const t = await createTenant();
    const number = (await createSmsNumber(t.business.id)).phoneNumber;
    const pairs = fc.array(fc.tuple(twilioName, fc.oneof(hostileText, sidLike, fc.constant(number))), { maxLength: 12 });
    const request = fc.record({
      path: fc.constantFrom(...paths),
      pairs,
      // Twilio always sends these; the generated pairs may add duplicates of them.
      sid: sidLike,
      to: fc.constantFrom(number, '+14155550999', ''),
      signing: fc.constantFrom('signed', 'signed', 'unsigned', 'tampered'),
      contentType: fc.constantFrom(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded',
        'application/json',
        'text/plain',
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ path, pairs, sid, to, signing, contentType }) => {
        const all: [string, string][] = [['MessageSid', sid], ['CallSid', sid], ['To', to], ['From', '+14155550100'], ...pairs];
        const body = new URLSearchParams(all).toString();
        const signed = expectedTwilioSignature(TWILIO_DEV_TOKEN, `${TEST_BASE_URL}${path}`, groupPairs(all));
        const headers: Record<string, string> = { 'content-type': contentType };
        if (signing === 'signed') headers['x-twilio-signature'] = signed;
        if (signing === 'tampered') headers['x-twilio-signature'] = signed.slice(1) + 'A';
        const before = await rowCounts();
        const { res, ms } = await timed(() => api.post(path, { headers, body }));
        expect(res.status).toBeLessThan(500);
        // A guard against pathological (super-linear) handling of hostile input, not a performance
        // target (those are measured by the benchmarks): generous enough for a loaded 2-core machine.
        expect(ms).toBeLessThan(3000);
        if (Buffer.byteLength(body) > 64 * 1024) expect(res.status).toBe(413);
        else if (signing === 'signed') expect(res.status).toBe(200);
        else {
          expect(res.status).toBe(403);
          expect(await rowCounts()).toBe(before);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('SendGrid events, property-based', () => {
  const hostileEvent = fc.record(
    {
      event: fc.oneof(
        fc.constantFrom('processed', 'delivered', 'bounce', 'dropped', 'open', 'click', 'spamreport', 'unknown'),
        hostileText,
      ),
      sg_event_id: hostileText,
      sg_message_id: hostileText,
      'smtp-id': hostileText,
      message_id: fc.oneof(fc.constantFrom('1', '2147483647', '2147483648', '99999999999999999999', '-1'), hostileText),
      email: hostileText,
      timestamp: fc.oneof(fc.integer(), fc.constant(2 ** 31)),
    },
    { requiredKeys: [] },
  );
  const element = fc.oneof(
    { weight: 6, arbitrary: hostileEvent as fc.Arbitrary<unknown> },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(null, 1, 'x', [], [[1]], { nested: { deeper: { deepest: [1, [2, [3]]] } } }),
    },
  );
  const batch = fc.oneof(
    { weight: 8, arbitrary: fc.array(element, { maxLength: 4 }).map((events) => JSON.stringify(events)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('{"event":"open"}', '[', '', 'null', '"x"', `${'['.repeat(5_000)}${']'.repeat(5_000)}`),
    },
  );

  it('signed batches answer 2xx, or 4xx when not understood; unsigned ones 403 and leave nothing', async () => {
    await fc.assert(
      fc.asyncProperty(batch, fc.constantFrom('signed', 'signed', 'unsigned', 'tampered'), async (body, signing) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'x-twilio-email-event-webhook-timestamp': timestamp,
        };
        if (signing !== 'unsigned')
          headers['x-twilio-email-event-webhook-signature'] = sendgridSignature(
            keys.privateKey,
            timestamp,
            signing === 'signed' ? body : `${body} `,
          );
        const before = await rowCounts();
        const { res, ms } = await timed(() => api.post('/api/v1/email/webhooks/sendgrid', { headers, body }));
        expect(res.status).toBeLessThan(500);
        // A guard against pathological (super-linear) handling of hostile input, not a performance
        // target (those are measured by the benchmarks): generous enough for a loaded 2-core machine.
        expect(ms).toBeLessThan(3000);
        if (signing !== 'signed') {
          expect(res.status).toBe(403);
          expect(await rowCounts()).toBe(before);
          return;
        }
        let understood = false;
        try {
          understood = Array.isArray(JSON.parse(body));
        } catch {
          understood = false;
        }
        if (understood) expect(res.status).toBe(200);
        else expect([400, 422]).toContain(res.status);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('Inbound Parse, property-based', () => {
  const fields = fc.dictionary(
    fc.oneof(
      fc.constantFrom(
        'from',
        'to',
        'subject',
        'text',
        'html',
        'headers',
        'envelope',
        'charsets',
        'attachments',
        'attachment-info',
      ),
      fc.string({ maxLength: 8 }),
    ),
    hostileText,
    { maxKeys: 8 },
  );

  it('any multipart body with the right secret answers 2xx or 400; a wrong secret 403 and nothing stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        fields,
        fc.boolean(),
        fc.nat({ max: 200 }),
        fc.constantFrom('dev-inbound-secret', 'dev-inbound-secret', 'wrong'),
        async (form, truncate, cut, secret) => {
          const { contentType, bytes } = await multipartBody(form as Record<string, string>);
          const body = truncate ? bytes.subarray(0, Math.max(0, bytes.length - 1 - cut)) : bytes;
          const before = await rowCounts();
          const { res, ms } = await timed(() =>
            postBytes(`/api/v1/email/webhooks/sendgrid/inbound?secret=${secret}`, { 'content-type': contentType }, body),
          );
          expect(res.status).toBeLessThan(500);
          // A guard against pathological (super-linear) handling of hostile input, not a performance
          // target (those are measured by the benchmarks): generous enough for a loaded 2-core machine.
          expect(ms).toBeLessThan(3000);
          if (secret === 'wrong') {
            expect(res.status).toBe(403);
            expect(await rowCounts()).toBe(before);
          } else {
            expect([200, 400]).toContain(res.status);
          }
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
